// The preset table; see presets.hpp. Shapes: layers, hidden, heads, seq, ffn
// (0 = 4h), vocab, global batch.
#include "kernels/hybrid/presets.hpp"

namespace sp::hybrid {

namespace {

Preset row(const char* name, int layers, int hidden, int heads, int batch, double params_b, int tp, int pp, int gpus) {
  Preset p;
  p.name = name;
  p.model = ModelShape{layers, hidden, heads, 2048, 0, 51200, batch};
  p.published_params = params_b * 1e9;
  p.published_digits = 1e8;  // Table 1 prints billions to one decimal
  p.tp = tp;
  p.pp = pp;
  p.gpus = gpus;
  p.source = "Narayanan et al. SC'21, Table 1";
  return p;
}

std::vector<Preset> make() {
  std::vector<Preset> v;
  Preset gpt2;
  gpt2.name = "gpt2-small";
  gpt2.model = ModelShape{12, 768, 12, 1024, 0, 50257, 512};
  gpt2.published_params = 124e6;  // the released checkpoint's count, in millions
  gpt2.published_digits = 1e6;
  gpt2.gpus = 1;
  gpt2.source = "Radford et al. 2019 (shape, batch 512); released checkpoint (124M parameters)";
  v.push_back(gpt2);

  Preset gpt3;
  gpt3.name = "gpt3-175b";
  gpt3.model = ModelShape{96, 12288, 96, 2048, 0, 51200, 1536};
  gpt3.published_params = 175e9;
  gpt3.published_digits = 1e9;
  gpt3.tp = 8;
  gpt3.pp = 8;
  gpt3.gpus = 1024;
  gpt3.source = "Brown et al. 2020 (shape); Narayanan et al. SC'21 (t = 8, p = 8 on 1024 GPUs, batch 1536)";
  v.push_back(gpt3);

  //           name              L    h      a    batch  params(B) t  p   GPUs
  v.push_back(row("megatron-1.7b", 24, 2304, 24, 512, 1.7, 1, 1, 32));
  v.push_back(row("megatron-3.6b", 30, 3072, 32, 512, 3.6, 2, 1, 64));
  v.push_back(row("megatron-7.5b", 36, 4096, 32, 512, 7.5, 4, 1, 128));
  v.push_back(row("megatron-18b", 40, 6144, 48, 1024, 18.4, 8, 1, 256));
  v.push_back(row("megatron-39b", 48, 8192, 64, 1536, 39.1, 8, 2, 512));
  v.push_back(row("megatron-76b", 60, 10240, 80, 1792, 76.1, 8, 4, 1024));
  v.push_back(row("megatron-146b", 80, 12288, 96, 2304, 145.6, 8, 8, 1536));
  v.push_back(row("megatron-310b", 96, 16384, 128, 2160, 310.1, 8, 16, 1920));
  v.push_back(row("megatron-530b", 105, 20480, 128, 2520, 529.6, 8, 35, 2520));
  v.push_back(row("megatron-1t", 128, 25600, 160, 3072, 1008.0, 8, 64, 3072));
  return v;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = make();
  return all;
}

const Preset* find_preset(const std::string& name) {
  for (auto& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string s;
  for (auto& p : presets()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

}  // namespace sp::hybrid
