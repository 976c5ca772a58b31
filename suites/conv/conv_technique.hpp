#pragma once
// One Technique class serves every convolution technique: a declaration
// lists its variants, each a Net (one conv for the primitives, a block for
// the composites) with a back end and the closed-form predictions of its
// structure. Variants sharing a structure (a block and its oneDNN run) share
// weights and reference; all variants see the same input.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scaleproof/technique.hpp"
#include "reference/conv/conv_ref.hpp"
#include "suites/conv/net_exec.hpp"

namespace sp::conv {

// Closed-form predictions (lightweight_models.hpp) for one structure.
struct Prediction {
  double params = -1;  // weights + biases; < 0: not predicted
  double macs = -1;    // conv multiply-adds, whole batch; < 0: not predicted
  int rf = 0;          // receptive field in rows and columns; 0: not predicted
};

struct VariantDef {
  std::string name;
  Backend be = Backend::direct;
  std::string structure;  // e.g. "stacked3x3"; equal structures get equal weights
  std::function<Net(const Params&)> build;
  std::function<Prediction(const Params&)> predict;
};

// A composite block compares defs[0] (the block) with defs[1] (the structure
// it replaces): the closed-form parameter ratio replaced / block.
struct BlockRatio {
  std::function<double(const Params&)> params_ratio;
  std::string formula;  // e.g. "49/27 (VGG 2.3)"
};

struct Declaration {
  Info info;  // variants and baseline are filled in from defs
  std::vector<VariantDef> defs;
  BlockRatio ratio;          // empty for the primitives
  std::string baseline_def;  // def name of the vendor baseline ("" = none)
};

// Vendor back ends this build can run: oneDNN (fp32, host memory), cuDNN (fp32, CUDA memory).
bool onednn_usable(bool fp32);
bool cudnn_usable(bool fp32);
bool usable(Backend be, bool fp32);

// Pad value: an integer or "same" ((k - 1) / 2, odd k).
int pad_of(const Params& p, int k);
Act act_of(const Params& p);

// The probe counter of a block's replaced structure: its fastest call over
// the block's (defs[1] / defs[0]), the two timed in turn by the service.
inline constexpr const char* kTimeRatio = "time_ratio";

template <class T>
class ConvTechnique : public Technique {
 public:
  explicit ConvTechnique(Declaration d);
  std::vector<std::string> available_variants() const override;
  void validate(const Params& p, int nranks) const override;
  Counts counts(const Params& p, int nranks) const override;
  void setup(const Params& p, int nranks) override;
  void run(const std::string& variant) override;
  CheckResult check(const std::string& variant) override;
  void report_counters(const std::string& variant, std::map<std::string, double>& out) override;
  std::vector<Probe> probes(const std::string& variant) const override;
  void teardown() override;
  void predict(const Params& p, const std::string& variant, const Measurement& m, const Machine& machine,
               std::vector<Verdict>& out) const override;

 private:
  const VariantDef& def(const std::string& variant) const;
  Counts counts_of(const Net& net) const;
  CheckResult check_definition(const std::string& variant);

  Declaration decl_;
  Tensor<T> x_;
  std::vector<T> hx_;
  Params params_;  // of the last setup, for the blocks' definition references
  std::map<std::string, std::unique_ptr<NetExec<T>>> exec_;
  std::map<std::string, reference::RefTensor> ref_;  // by structure
};

}  // namespace sp::conv
