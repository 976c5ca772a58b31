#include "scaleproof/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace sp {

Registry& Registry::get() {
  static Registry r;
  return r;
}

void Registry::add(std::function<std::unique_ptr<Technique>()> make) { pending_.push_back(std::move(make)); }

const std::vector<Registered>& Registry::all() {
  // Registration runs during static initialisation, so prototypes are built
  // lazily here, once, when everything has registered.
  if (!pending_.empty()) {
    for (auto& make : pending_) {
      auto proto = make();
      Info info = proto->info();
      for (auto& r : items_)
        if (r.info.name == info.name) throw std::logic_error("technique registered twice: " + info.name);
      check_declaration(info);
      items_.push_back({std::move(make), std::move(info)});
    }
    pending_.clear();
    std::sort(items_.begin(), items_.end(), [](const Registered& a, const Registered& b) {
      return a.info.family != b.info.family ? a.info.family < b.info.family : a.info.name < b.info.name;
    });
  }
  return items_;
}

const Registered* Registry::find(const std::string& name) {
  for (auto& r : all())
    if (r.info.name == name) return &r;
  return nullptr;
}

std::vector<std::string> Registry::families() {
  std::vector<std::string> f;
  for (auto& r : all())
    if (f.empty() || f.back() != r.info.family) f.push_back(r.info.family);
  return f;
}

}  // namespace sp
