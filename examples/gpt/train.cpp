// The training loop. One step: `accum` micro-batches of forward + backward accumulating
// gradients, global-norm clipping, the learning rate for the step, AdamW. Everything inside a
// step stays on the tensors' device; the host reads the loss (and gradient norm) only on the
// steps it prints.
#include "examples/gpt/train.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "examples/gpt/adamw.hpp"
#include "examples/gpt/checkpoint.hpp"
#include "examples/gpt/data.hpp"
#include "examples/gpt/grad_clip.hpp"
#include "examples/gpt/phase_profile.hpp"
#include "examples/gpt/safetensors.hpp"
#include "examples/gpt/schedule.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

namespace {

// The H200's dense BF16 peak, the denominator of the model FLOP utilisation.
constexpr double kPeakFlops = 989e12;
// The validation batches are the same at every evaluation: their own fixed stream.
constexpr std::uint64_t kValSeed = 0x5eed5eed5eed5eedULL;

std::string mib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

std::string number(double value) {  // JSON: enough digits to read a float back exactly
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

// Rough bytes a step needs (weights, gradients, two moments, activations of one micro-batch),
// for the out-of-memory message.
double estimated_bytes(const ModelConfig& m, std::int64_t batch) {
  const double params = static_cast<double>(m.parameter_count());
  const double n = static_cast<double>(batch * m.context);
  const double c = static_cast<double>(m.n_embd);
  const double per_layer = n * 20.0 * c + 2.0 * static_cast<double>(batch * m.n_head) * static_cast<double>(m.context * m.context);
  const double activations = static_cast<double>(m.n_layer) * per_layer + 3.0 * n * static_cast<double>(m.vocab);
  return 4.0 * (4.0 * params + activations);
}

float evaluate(const Weights& weights, const ModelConfig& config, const Corpus& corpus, std::int64_t batch,
               std::int64_t batches, Device device, MatmulCompute compute) {
  SplitMix64 rng{kValSeed};
  Tensor total;
  for (std::int64_t i = 0; i < batches; ++i) {
    const Batch b = sample_batch(corpus.val, batch, config.context, rng, device);
    LossCache cache;
    const Tensor loss = cross_entropy(forward(weights, config, b.inputs, nullptr, compute), b.targets.reshape({-1}), cache);
    total = total.defined() ? total + loss : loss;
  }
  return (total / static_cast<double>(batches)).item<float>();
}

class JsonLog {
 public:
  explicit JsonLog(const std::string& path) {
    if (path.empty()) return;
    out_.open(path, std::ios::trunc);
    FERRITE_CHECK(out_.good(), InvalidArgument, "--json: cannot write ", path);
  }
  void write(const std::string& line) {
    if (out_.is_open()) out_ << line << "\n" << std::flush;
  }

 private:
  std::ofstream out_;
};

}  // namespace

Device resolve_device(const std::optional<Device>& requested) {
  const int gpus = cuda_device_count();
  if (!requested) return gpus > 0 ? Device::cuda(0) : Device::cpu();
  if (requested->is_cuda())
    FERRITE_CHECK(requested->index < gpus, InvalidArgument, "device ", requested->str(),
                  " does not exist: this machine has ", gpus, " CUDA device", gpus == 1 ? "" : "s",
                  gpus == 0 ? " (or ferrite was built without CUDA); use --device cpu" : "");
  return *requested;
}

int run_train(const TrainOptions& options) {
  const Preset p = preset(options.preset);
  const Device device = resolve_device(options.device);
  const std::int64_t steps = options.steps.value_or(p.steps);
  FERRITE_CHECK(steps >= 0, InvalidArgument, "--steps must be >= 0, got ", steps);
  const std::int64_t log_every = std::max<std::int64_t>(1, options.log_every.value_or(p.log_every));
  const std::int64_t eval_every = options.eval_every.value_or(p.eval_every);

  TrainState state;
  if (!options.resume.empty()) {
    state = load_checkpoint(options.resume, device, /*with_optimizer=*/true);
    FERRITE_CHECK(state.model == p.model, InvalidArgument, "checkpoint ", options.resume, " holds a model of ",
                  state.model.str(), ", but --preset ", options.preset, " is ", p.model.str());
  } else {
    state.model = p.model;
    state.train = p.train;
  }
  TrainConfig& tc = state.train;
  if (options.batch) tc.batch = *options.batch;
  if (options.accum) tc.accum = *options.accum;
  if (options.lr) tc.lr = *options.lr;
  if (options.dropout) tc.dropout = *options.dropout;
  FERRITE_CHECK(tc.dropout >= 0 && tc.dropout < 1, InvalidArgument, "--dropout must be in [0, 1), got ", tc.dropout);
  if (options.warmup) tc.warmup = *options.warmup;
  if (options.seed) tc.seed = *options.seed;
  if (options.schedule_steps) tc.schedule_steps = *options.schedule_steps;
  if (tc.schedule_steps == 0) tc.schedule_steps = steps;
  FERRITE_CHECK(tc.batch >= 1 && tc.accum >= 1, InvalidArgument, "--batch and --accum must be >= 1, got ", tc.batch,
                " and ", tc.accum);
  const ModelConfig& mc = state.model;
  FERRITE_CHECK(options.precision == "f32" || options.precision == "bf16", InvalidArgument, "--precision '",
                options.precision, "': use f32 or bf16");
  const bool bf16 = options.precision == "bf16";
  const MatmulCompute compute = bf16 ? MatmulCompute::BF16 : MatmulCompute::F32;

  const Corpus corpus = load_corpus(options.data.empty() ? kDefaultCorpus : options.data, mc.context);
  if (options.resume.empty()) {
    state.weights = init_weights(mc, tc.seed, DType::F32, device);
    state.m = zeros_like(state.weights);
    state.v = zeros_like(state.weights);
    state.data_rng = tc.seed ^ 0xda7a;
    state.dropout_rng = random::RngState{tc.seed ^ 0xd509, 0};
  }
  // The dropout stream, on the training device; its state travels in the checkpoint, so a
  // resumed run draws the masks the uninterrupted one would have.
  random::Generator dropout_generator(state.dropout_rng.seed, device);
  dropout_generator.set_state(state.dropout_rng);
  // The master weights in one buffer: the BF16 forward casts them in one launch.
  state.weights = flatten(state.weights);
  // The gradients are views of one buffer: zeroed, normed and clipped in one launch each.
  Tensor grad_buffer;
  Weights grads = zeros_like_flat(state.weights, grad_buffer);
  // AdamW's two groups (weight decay on matrices and embeddings; none on biases and gains),
  // each updated by one fused launch.
  struct Group {
    std::vector<Tensor> params, grads, ms, vs;
  };
  Group decayed, undecayed;
  {
    auto named_p = state.weights.named();
    auto named_g = grads.named();
    auto named_m = state.m.named();
    auto named_v = state.v.named();
    for (std::size_t i = 0; i < named_p.size(); ++i) {
      Group& group = named_p[i].second->dim() >= 2 ? decayed : undecayed;  // matrices and embeddings
      group.params.push_back(*named_p[i].second);
      group.grads.push_back(*named_g[i].second);
      group.ms.push_back(*named_m[i].second);
      group.vs.push_back(*named_v[i].second);
    }
  }

  const std::int64_t tokens_per_step = tc.batch * tc.accum * mc.context;
  std::cout << "ferrite train: preset " << options.preset << " (" << mc.str() << "), "
            << std::fixed << std::setprecision(2) << static_cast<double>(mc.parameter_count()) / 1e6
            << std::defaultfloat << std::setprecision(6) << "M parameters, "
            << (bf16 ? "BF16 activations and matmuls (F32 master weights, residual stream, LayerNorm, loss, AdamW)" : "F32") << ", device " << device.str() << "\n"
            << "data: " << corpus.source << " (" << corpus.files << " file" << (corpus.files == 1 ? "" : "s") << ", "
            << corpus.train.size() << " train / " << corpus.val.size() << " val bytes); batch " << tc.batch << " x "
            << tc.accum << " x " << mc.context << " = " << tokens_per_step << " tokens/step; lr " << tc.lr
            << ", warm-up " << tc.warmup << ", cosine to step " << tc.schedule_steps;
  if (tc.dropout > 0) std::cout << ", dropout " << tc.dropout;
  std::cout << "\n";
  if (state.step > 0) std::cout << "resumed from " << options.resume << " at step " << state.step << "\n";

  JsonLog log(options.json);
  {
    std::ostringstream line;
    line << "{\"event\":\"config\",\"preset\":\"" << options.preset << "\",\"device\":\"" << device.str()
         << "\",\"precision\":\"" << options.precision << "\",\"n_layer\":" << mc.n_layer << ",\"n_head\":" << mc.n_head << ",\"n_embd\":" << mc.n_embd
         << ",\"context\":" << mc.context << ",\"parameters\":" << mc.parameter_count() << ",\"batch\":" << tc.batch
         << ",\"accum\":" << tc.accum << ",\"start_step\":" << state.step << ",\"steps\":" << steps << "}";
    log.write(line.str());
  }

  SplitMix64 rng{state.data_rng};
  using Clock = std::chrono::steady_clock;
  const auto run_start = Clock::now();
  auto interval_start = run_start;
  std::int64_t interval_steps = 0;
  const std::int64_t first_step = state.step;
  float last_loss = NAN, last_val = NAN;
  if (device.is_cuda()) cuda::reset_peak_memory(device.index);

  // --profile: every step after the first (which builds plans and fills the memory pool).
  PhaseProfile profile(device);
  std::int64_t profiled_steps = 0;
  double profiled_seconds = 0;
  struct ProfileOff {  // no phase reports to `profile` once the loop is left, however it is left
    ~ProfileOff() { set_active_profile(nullptr); }
  } profile_off;
  try {
    for (std::int64_t step = state.step; step < steps; ++step) {
      const bool profiling = options.profile && step > first_step;
      set_active_profile(profiling ? &profile : nullptr);
      const auto step_start = Clock::now();
      {
        Phase phase("zero grads");
        grad_buffer.zero_();
      }
      Tensor loss_sum;
      for (std::int64_t micro = 0; micro < tc.accum; ++micro) {
        const Batch batch = sample_batch(corpus.train, tc.batch, mc.context, rng, device);
        ForwardCache cache;
        cache.dropout = tc.dropout;
        cache.dropout_generator = &dropout_generator;
        const Tensor loss = forward_loss(state.weights, mc, batch.inputs, batch.targets, cache, compute);
        loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
        backward(state.weights, mc, cache, 1.0 / static_cast<double>(tc.accum), grads);
      }
      if (!options.dump_grads.empty() && step == first_step) {
        std::vector<std::pair<std::string, Tensor>> named;
        for (const auto& [name, tensor] : grads.named()) named.emplace_back(name, *tensor);
        save_safetensors(options.dump_grads, named, {{"step", std::to_string(step + 1)}});
      }
      Tensor norm;
      {
        Phase phase("grad norm and clip");
        norm = global_norm({grad_buffer});  // the gaps between the views are zeros
        if (tc.grad_clip > 0) clip_grads({grad_buffer}, norm, tc.grad_clip);
      }
      const double lr = learning_rate(tc, step);
      {
        Phase phase("adamw");
        for (const Group* group : {&decayed, &undecayed}) {
          const AdamWHyper hyper{.lr = lr, .beta1 = tc.beta1, .beta2 = tc.beta2, .eps = tc.eps,
                                 .weight_decay = group == &decayed ? tc.weight_decay : 0.0};
          adamw_update(group->params, group->grads, group->ms, group->vs, step + 1, hyper);
        }
      }
      if (profiling) {
        synchronize(device);
        profiled_seconds += std::chrono::duration<double>(Clock::now() - step_start).count();
        ++profiled_steps;
      }
      set_active_profile(nullptr);  // evaluation and logging below are not part of a step
      state.step = step + 1;
      state.data_rng = rng.state;
      state.dropout_rng = dropout_generator.state();
      ++interval_steps;

      const bool last = state.step == steps;
      const bool eval_now = eval_every > 0 && (state.step % eval_every == 0 || last);
      const bool print_now = state.step % log_every == 0 || last || step == first_step || eval_now;
      if (print_now) {
        last_loss = (loss_sum / static_cast<double>(tc.accum)).item<float>();  // waits for the step
        const float grad_norm = norm.item<float>();
        const double seconds = std::chrono::duration<double>(Clock::now() - interval_start).count();
        const double tok_s = static_cast<double>(interval_steps * tokens_per_step) / std::max(seconds, 1e-9);
        const double flops = tok_s * mc.flops_per_token();
        float val = NAN;
        if (eval_now) last_val = val = evaluate(state.weights, mc, corpus, tc.batch, options.eval_batches, device, compute);
        const MemoryStats mem = memory_stats(device);
        char val_text[24] = "val   ----  ";
        if (!std::isnan(val)) std::snprintf(val_text, sizeof val_text, "val %.4f  ", val);
        char rate_text[32];
        if (device.is_cuda())
          std::snprintf(rate_text, sizeof rate_text, "mfu %.2f%%", 100.0 * flops / kPeakFlops);
        else
          std::snprintf(rate_text, sizeof rate_text, "%.2f GFLOP/s", flops / 1e9);
        char line[320];
        std::snprintf(line, sizeof line, "step %6lld/%lld | loss %.4f | %s | lr %.2e | norm %6.3f | %8.0f tok/s | %s",
                      static_cast<long long>(state.step), static_cast<long long>(steps), last_loss, val_text, lr,
                      grad_norm, tok_s, rate_text);
        std::cout << line << " | mem " << mib(mem.in_use_bytes) << " (peak " << mib(mem.peak_bytes) << ")"
                  << std::endl;
        std::ostringstream json;
        json << "{\"event\":\"step\",\"step\":" << state.step << ",\"loss\":" << number(last_loss)
             << ",\"val_loss\":" << number(val) << ",\"lr\":" << number(lr) << ",\"grad_norm\":" << number(grad_norm)
             << ",\"tokens_per_s\":" << number(tok_s) << ",\"flops_per_s\":" << number(flops)
             << ",\"mfu\":" << number(flops / kPeakFlops) << ",\"mem_bytes\":" << mem.in_use_bytes
             << ",\"peak_mem_bytes\":" << mem.peak_bytes << "}";
        log.write(json.str());
        interval_start = Clock::now();
        interval_steps = 0;
      }
      if (!options.checkpoint.empty() && options.save_every > 0 && state.step % options.save_every == 0 && !last)
        save_checkpoint(options.checkpoint, state);
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::OutOfMemory) throw;
    std::ostringstream message;
    message << e.what() << " (batch " << tc.batch << " x " << mc.context << " of " << mc.str() << " needs about "
            << estimated_bytes(mc, tc.batch) / (1024.0 * 1024.0 * 1024.0)
            << " GiB for weights, gradients, AdamW moments and activations; try a smaller --batch with --accum)";
    throw Error(ErrorKind::OutOfMemory, message.str());
  }

  if (!options.checkpoint.empty()) {
    save_checkpoint(options.checkpoint, state);
    std::cout << "checkpoint: " << options.checkpoint << " (step " << state.step << ")\n";
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  const std::int64_t trained = state.step - first_step;
  const double tok_s = static_cast<double>(trained * tokens_per_step) / std::max(seconds, 1e-9);
  const MemoryStats mem = memory_stats(device);
  char val_text[32] = "";
  if (!std::isnan(last_val)) std::snprintf(val_text, sizeof val_text, ", val loss %.4f", last_val);
  std::printf("done: %lld steps in %.1f s, %.0f tok/s; final loss %.4f%s; peak memory %s\n",
              static_cast<long long>(trained), seconds, tok_s, last_loss, val_text, mib(mem.peak_bytes).c_str());
  std::ostringstream json;
  json << "{\"event\":\"summary\",\"steps\":" << trained << ",\"final_step\":" << state.step
       << ",\"seconds\":" << number(seconds) << ",\"tokens_per_s\":" << number(tok_s)
       << ",\"loss\":" << number(last_loss) << ",\"val_loss\":" << number(last_val)
       << ",\"peak_mem_bytes\":" << mem.peak_bytes << "}";
  log.write(json.str());
  if (options.profile) profile.print(std::cout, profiled_steps, profiled_seconds);
  return 0;
}

}  // namespace ferrite::gpt
