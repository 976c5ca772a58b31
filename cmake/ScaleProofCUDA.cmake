# The CUDA toolkit's imported targets (CUDA::cudart, CUDA::cublas, ...),
# made usable where a newer CMake expects parts that a toolkit lacks:
# - include directories that do not exist (CMake 4 adds include/cccl for
#   CUDA 13 whether or not the toolkit has it) are dropped from the targets'
#   interfaces, because CMake refuses a target naming a missing directory
#   (Kokkos 3.4's exported config also writes a list of directories as one
#   entry split by newlines: the entry is split first);
# - CUDA::cuda_driver (which Kokkos's CUDA back end links) gets the driver
#   library, or the toolkit's stub of it, where FindCUDAToolkit set none.
find_package(CUDAToolkit REQUIRED)

foreach(_sp_t toolkit cudart cudart_static cublas cublasLt cuda_driver)
  if(TARGET CUDA::${_sp_t})
    get_target_property(_sp_dirs CUDA::${_sp_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(_sp_dirs)
      string(REPLACE "\n" ";" _sp_dirs "${_sp_dirs}")
      set(_sp_keep)
      foreach(_sp_d IN LISTS _sp_dirs)
        if(EXISTS "${_sp_d}" OR _sp_d MATCHES "\\$<")
          list(APPEND _sp_keep "${_sp_d}")
        else()
          message(STATUS "CUDA: dropping missing include directory ${_sp_d} from CUDA::${_sp_t}")
        endif()
      endforeach()
      set_property(TARGET CUDA::${_sp_t} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_sp_keep}")
    endif()
  endif()
endforeach()

if(TARGET CUDA::cuda_driver)
  get_target_property(_sp_loc CUDA::cuda_driver IMPORTED_LOCATION)
  get_target_property(_sp_loc_rel CUDA::cuda_driver IMPORTED_LOCATION_RELEASE)
  if(NOT _sp_loc AND NOT _sp_loc_rel)
    find_library(SP_CUDA_DRIVER_LIBRARY NAMES cuda libcuda.so.1
                 HINTS ${CUDAToolkit_LIBRARY_DIR}/stubs ${CUDAToolkit_LIBRARY_DIR}
                       ${CUDAToolkit_TARGET_DIR}/lib/stubs /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu)
    if(NOT SP_CUDA_DRIVER_LIBRARY)
      message(FATAL_ERROR "CUDA: no driver library (libcuda) nor its stub found; set SP_CUDA_DRIVER_LIBRARY")
    endif()
    message(STATUS "CUDA: CUDA::cuda_driver had no location; using ${SP_CUDA_DRIVER_LIBRARY}")
    set_property(TARGET CUDA::cuda_driver PROPERTY IMPORTED_LOCATION "${SP_CUDA_DRIVER_LIBRARY}")
  endif()
endif()
