# oneDNN is the convolution family's CPU vendor baseline (host memory only);
# cuDNN its GPU one, looked for only in CUDA builds.
if(SP_ENABLE_ONEDNN)
  target_link_libraries(${SP_FAMILY_TARGET} PUBLIC DNNL::dnnl)
  target_compile_definitions(${SP_FAMILY_TARGET} PUBLIC SP_HAVE_ONEDNN)
endif()
