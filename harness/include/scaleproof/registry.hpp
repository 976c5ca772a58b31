#pragma once
// The technique registry: each technique registers a factory once, in its
// family's suites/ file; everything else (CLI, CTest, benchmarks, models,
// reports) enumerates the registry. Families may also register extra CLI
// subcommands (e.g. `scaleproof model zero`) without touching the harness.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scaleproof/technique.hpp"

namespace CLI {
class App;
}

namespace sp {

struct Registered {
  std::function<std::unique_ptr<Technique>()> make;
  Info info;  // copied from a prototype instance at first use
};

class Registry {
 public:
  static Registry& get();
  void add(std::function<std::unique_ptr<Technique>()> make);
  const std::vector<Registered>& all();  // sorted by family, then name
  const Registered* find(const std::string& name);
  std::vector<std::string> families();

  // Family-provided subcommands (e.g. `scaleproof model zero`). A hook adds
  // its subcommand to the top-level app and returns it with the action that
  // main() runs, after MPI and Kokkos are up, when that subcommand was given.
  // The action returns the exit code and throws InputError for bad input.
  // `on_ranks`: the action runs techniques on every rank of an MPI job, so
  // main() gives the subcommand the watchdog (--timeout).
  struct Command {
    CLI::App* sub = nullptr;
    std::function<int()> run;
    bool on_ranks = false;
  };
  using CommandHook = std::function<Command(CLI::App&)>;
  void add_command(CommandHook hook) { commands_.push_back(std::move(hook)); }
  const std::vector<CommandHook>& commands() const { return commands_; }

 private:
  std::vector<std::function<std::unique_ptr<Technique>()>> pending_;
  std::vector<Registered> items_;
  std::vector<CommandHook> commands_;
};

struct Registrar {
  explicit Registrar(std::function<std::unique_ptr<Technique>()> make) { Registry::get().add(std::move(make)); }
};
struct CommandRegistrar {
  explicit CommandRegistrar(Registry::CommandHook hook) { Registry::get().add_command(std::move(hook)); }
};

}  // namespace sp

#define SP_CONCAT_(a, b) a##b
#define SP_CONCAT(a, b) SP_CONCAT_(a, b)
// SP_REGISTER_TECHNIQUE(MyTechnique) or SP_REGISTER_TECHNIQUE(MyTechnique, ctor args...)
#define SP_REGISTER_TECHNIQUE(T, ...)             \
  static ::sp::Registrar SP_CONCAT(sp_registrar_, \
                                   __LINE__)([] { return std::unique_ptr<::sp::Technique>(new T(__VA_ARGS__)); })
#define SP_REGISTER_COMMAND(fn) static ::sp::CommandRegistrar SP_CONCAT(sp_cmd_registrar_, __LINE__)(fn)
