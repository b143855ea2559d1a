#include "trace/roofline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "trace/breakdown.hpp"
#include "trace/correlation_map.hpp"
#include "trace/gpu_peaks.hpp"

namespace scalelens::trace {
namespace {

enum class Model : std::uint8_t { none, mm, addmm, bmm, baddbmm, linear, matmul, conv_forward, conv_backward, sdpa, sdpa_backward,
                                  elementwise, fill, copy, reduction, softmax, norm, norm_backward };

struct Known {
  std::string_view name;  // without "aten::"
  Model model;
  double flops_per_element;  // element-wise ops, reductions and norms
};

// Element-wise: one FLOP per output element (two for the fused multiply-adds); reductions one per
// input element; softmax five (max, subtract, exp, sum, divide); norms five (mean, variance,
// normalise, scale, shift), their backward ten. Memory: every tensor input read once, the output
// (the largest input's shape) written once. These are the usual first-order counts (as in fvcore
// and TraceLens); the point is the order of magnitude of the intensity, not the last FLOP.
constexpr Known kKnown[] = {
    {"mm", Model::mm, 0}, {"addmm", Model::addmm, 0}, {"bmm", Model::bmm, 0}, {"baddbmm", Model::baddbmm, 0},
    {"linear", Model::linear, 0}, {"matmul", Model::matmul, 0},
    {"convolution", Model::conv_forward, 0}, {"_convolution", Model::conv_forward, 0},
    {"cudnn_convolution", Model::conv_forward, 0}, {"miopen_convolution", Model::conv_forward, 0},
    {"conv1d", Model::conv_forward, 0}, {"conv2d", Model::conv_forward, 0}, {"conv3d", Model::conv_forward, 0},
    {"convolution_backward", Model::conv_backward, 0},
    {"scaled_dot_product_attention", Model::sdpa, 0}, {"_scaled_dot_product_flash_attention", Model::sdpa, 0},
    {"_scaled_dot_product_efficient_attention", Model::sdpa, 0}, {"_scaled_dot_product_cudnn_attention", Model::sdpa, 0},
    {"_scaled_dot_product_flash_attention_backward", Model::sdpa_backward, 0},
    {"_scaled_dot_product_efficient_attention_backward", Model::sdpa_backward, 0},
    {"_scaled_dot_product_cudnn_attention_backward", Model::sdpa_backward, 0},
    {"add", Model::elementwise, 1}, {"add_", Model::elementwise, 1}, {"sub", Model::elementwise, 1},
    {"sub_", Model::elementwise, 1}, {"mul", Model::elementwise, 1}, {"mul_", Model::elementwise, 1},
    {"div", Model::elementwise, 1}, {"div_", Model::elementwise, 1}, {"neg", Model::elementwise, 1},
    {"relu", Model::elementwise, 1}, {"relu_", Model::elementwise, 1}, {"gelu", Model::elementwise, 1},
    {"silu", Model::elementwise, 1}, {"silu_", Model::elementwise, 1}, {"sigmoid", Model::elementwise, 1},
    {"tanh", Model::elementwise, 1}, {"exp", Model::elementwise, 1}, {"exp_", Model::elementwise, 1},
    {"log", Model::elementwise, 1}, {"sqrt", Model::elementwise, 1}, {"rsqrt", Model::elementwise, 1},
    {"pow", Model::elementwise, 1}, {"clamp", Model::elementwise, 1}, {"clamp_min", Model::elementwise, 1},
    {"where", Model::elementwise, 1}, {"nan_to_num", Model::elementwise, 1}, {"masked_fill_", Model::elementwise, 1},
    {"threshold_backward", Model::elementwise, 1}, {"gelu_backward", Model::elementwise, 1},
    {"silu_backward", Model::elementwise, 1}, {"sigmoid_backward", Model::elementwise, 1},
    {"tanh_backward", Model::elementwise, 1}, {"native_dropout", Model::elementwise, 1},
    {"addcmul_", Model::elementwise, 2}, {"addcdiv_", Model::elementwise, 2}, {"lerp_", Model::elementwise, 2},
    {"fill_", Model::fill, 0}, {"zero_", Model::fill, 0}, {"copy_", Model::copy, 0},
    {"sum", Model::reduction, 1}, {"mean", Model::reduction, 1},
    {"softmax", Model::softmax, 5}, {"_softmax", Model::softmax, 5}, {"log_softmax", Model::softmax, 5},
    {"_log_softmax", Model::softmax, 5}, {"_softmax_backward_data", Model::softmax, 5},
    {"layer_norm", Model::norm, 5}, {"native_layer_norm", Model::norm, 5}, {"native_batch_norm", Model::norm, 5},
    {"cudnn_batch_norm", Model::norm, 5}, {"native_group_norm", Model::norm, 5},
    {"native_layer_norm_backward", Model::norm_backward, 10}, {"native_batch_norm_backward", Model::norm_backward, 10},
    {"cudnn_batch_norm_backward", Model::norm_backward, 10}, {"native_group_norm_backward", Model::norm_backward, 10},
};

const Known* known(std::string_view name) {
  if (name.substr(0, 6) != "aten::") return nullptr;
  name.remove_prefix(6);
  // A few thousand names per trace are asked: the table is small enough to scan.
  for (const auto& k : kKnown)
    if (k.name == name) return &k;
  return nullptr;
}

// One input of an op: a tensor's shape, or not a tensor (a scalar, a list, None).
struct Input {
  bool tensor = false;
  std::vector<double> dims;
  double numel() const {
    double n = 1;
    for (double d : dims) n *= d;
    return n;
  }
  int rank() const { return static_cast<int>(dims.size()); }
  double dim(int i) const { return i < 0 ? dims[dims.size() + i] : dims[i]; }  // caller checks rank
};

// "[[256], [16, 13], [], []]" and ["float", "float", "Scalar", ""] into inputs with their byte sizes.
bool parse_inputs(std::string_view dims_json, std::string_view types_json, std::vector<Input>& inputs, std::vector<int>& sizes,
                  std::vector<std::string>& types) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(simdjson::padded_string(dims_json)).get(doc)) return false;
  simdjson::dom::array list;
  if (doc.get_array().get(list)) return false;
  for (auto item : list) {
    Input in;
    simdjson::dom::array shape;
    if (!item.get_array().get(shape)) {
      in.tensor = true;
      for (auto d : shape) {
        std::int64_t v;
        if (d.get_int64().get(v) || v < 0) {  // a list of tensors ([[2, 3], [2, 3]]) or junk: not one tensor
          in.tensor = false;
          in.dims.clear();
          break;
        }
        in.dims.push_back(static_cast<double>(v));
      }
    }
    inputs.push_back(std::move(in));
  }
  simdjson::dom::element tdoc;
  simdjson::dom::array tlist;
  if (!types_json.empty() && !parser.parse(simdjson::padded_string(types_json)).get(tdoc) && !tdoc.get_array().get(tlist))
    for (auto t : tlist) {
      std::string_view s;
      types.emplace_back(t.get_string().get(s) ? std::string_view() : s);
    }
  types.resize(inputs.size());
  for (const auto& t : types) sizes.push_back(dtype_bytes(t));
  // "[]" is what Kineto records for a scalar, None and a 0-dim tensor alike: a tensor (one element)
  // only when its type is a tensor's ("float"), not "Scalar" or "".
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].tensor && inputs[i].dims.empty() && sizes[i] == 0) inputs[i].tensor = false;
  return true;
}

}  // namespace

bool has_cost_model(std::string_view op_name) { return known(op_name) != nullptr; }

OpCost op_cost(std::string_view op_name, std::string_view input_dims_json, std::string_view input_types_json) {
  OpCost c;
  const Known* k = known(op_name);
  if (!k) {
    c.why = "no cost model for this op";
    return c;
  }
  std::vector<Input> in;
  std::vector<int> size;
  std::vector<std::string> types;
  if (input_dims_json.empty() || !parse_inputs(input_dims_json, input_types_json, in, size, types)) {
    c.why = "no shapes recorded";
    return c;
  }
  // Bytes per element of the first tensor input: the op's working type.
  int elem = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i].tensor && size[i] > 0) {
      elem = size[i];
      c.precision = precision_of(types[i]);
      break;
    }
  auto tensor = [&](std::size_t i, int rank_at_least) { return i < in.size() && in[i].tensor && in[i].rank() >= rank_at_least; };
  auto bytes_of = [&](std::size_t i) { return i < in.size() && in[i].tensor ? in[i].numel() * (size[i] > 0 ? size[i] : elem) : 0.0; };
  auto unknown = [&](std::string why) {
    c.flops = c.bytes = -1;
    c.why = std::move(why);
    return c;
  };
  if (elem == 0) return unknown("no tensor input of a known type");
  switch (k->model) {
    case Model::mm:
    case Model::addmm: {
      const std::size_t a = k->model == Model::mm ? 0 : 1;
      if (!tensor(a, 2) || !tensor(a + 1, 2) || in[a].rank() != 2 || in[a + 1].rank() != 2) return unknown("matrix shapes not recorded");
      const double m = in[a].dim(0), kk = in[a].dim(1), n = in[a + 1].dim(1);
      c.flops = 2 * m * n * kk + (k->model == Model::addmm ? m * n : 0);
      c.bytes = bytes_of(a) + bytes_of(a + 1) + m * n * elem + (k->model == Model::addmm ? bytes_of(0) : 0);
      return c;
    }
    case Model::bmm:
    case Model::baddbmm: {
      const std::size_t a = k->model == Model::bmm ? 0 : 1;
      if (!tensor(a, 3) || !tensor(a + 1, 3) || in[a].rank() != 3 || in[a + 1].rank() != 3) return unknown("batched shapes not recorded");
      const double b = in[a].dim(0), m = in[a].dim(1), kk = in[a].dim(2), n = in[a + 1].dim(2);
      c.flops = 2 * b * m * n * kk + (k->model == Model::baddbmm ? b * m * n : 0);
      c.bytes = bytes_of(a) + bytes_of(a + 1) + b * m * n * elem + (k->model == Model::baddbmm ? bytes_of(0) : 0);
      return c;
    }
    case Model::linear: {  // x[..., K] · w[N, K]ᵀ (+ b[N])
      if (!tensor(0, 1) || !tensor(1, 2) || in[1].rank() != 2) return unknown("linear shapes not recorded");
      const double kk = in[0].dim(-1), n = in[1].dim(0), rows = kk > 0 ? in[0].numel() / kk : 0;
      c.flops = 2 * rows * n * kk + (tensor(2, 1) ? rows * n : 0);
      c.bytes = bytes_of(0) + bytes_of(1) + bytes_of(2) + rows * n * elem;
      return c;
    }
    case Model::matmul: {  // a[..., M, K] · b[..., K, N] with the same (or no) batch on b
      if (!tensor(0, 2) || !tensor(1, 2)) return unknown("matmul of vectors or unrecorded shapes");
      const double kk = in[0].dim(-1), n = in[1].dim(-1), rows = kk > 0 ? in[0].numel() / kk : 0;
      if (in[1].dim(-2) != kk) return unknown("matmul shapes do not agree");
      c.flops = 2 * rows * n * kk;
      c.bytes = bytes_of(0) + bytes_of(1) + rows * n * elem;
      return c;
    }
    case Model::conv_forward:
      // The output's spatial size depends on stride, padding and dilation, which Input Dims do not hold.
      return unknown("a forward convolution's output size is not in the recorded shapes");
    case Model::conv_backward: {  // grad_out[N, O, *out], input[N, C, *in], weight[O, C/g, *k]
      if (!tensor(0, 3) || !tensor(1, 3) || !tensor(2, 3) || in[0].rank() != in[2].rank()) return unknown("convolution shapes not recorded");
      double out_spatial = 1, kernel = 1;
      for (int i = 2; i < in[0].rank(); ++i) out_spatial *= in[0].dim(i);
      for (int i = 2; i < in[2].rank(); ++i) kernel *= in[2].dim(i);
      const double forward = 2 * in[0].dim(0) * in[0].dim(1) * out_spatial * in[2].dim(1) * kernel;
      c.flops = 2 * forward;  // gradients of the input and of the weight
      c.bytes = bytes_of(0) + 2 * bytes_of(1) + 2 * bytes_of(2);
      return c;
    }
    case Model::sdpa:
    case Model::sdpa_backward: {
      // forward: q[B, H, L, E], k[B, H, S, E], v[B, H, S, Ev]; backward starts with grad_out[B, H, L, Ev].
      const std::size_t q = k->model == Model::sdpa ? 0 : 1;
      if (!tensor(q, 4) || !tensor(q + 1, 4) || !tensor(q + 2, 4)) return unknown("attention shapes not recorded");
      const double b = in[q].dim(0), h = in[q].dim(1), l = in[q].dim(2), e = in[q].dim(3), s = in[q + 1].dim(2), ev = in[q + 2].dim(3);
      const double forward = 2 * b * h * l * s * e + 2 * b * h * l * s * ev;  // causal masking not known: full
      // Backward recomputes the scores and takes four more products: 2.5 × the forward (FlashAttention-2).
      c.flops = k->model == Model::sdpa ? forward : 2.5 * forward;
      const double out = b * h * l * ev * elem;
      c.bytes = bytes_of(q) + bytes_of(q + 1) + bytes_of(q + 2) + out + (k->model == Model::sdpa ? 0 : out + bytes_of(q) + bytes_of(q + 1) + bytes_of(q + 2));
      return c;
    }
    case Model::fill: {
      if (!tensor(0, 0)) return unknown("no tensor shape");
      c.flops = 0;
      c.bytes = bytes_of(0);
      return c;
    }
    case Model::copy: {
      if (!tensor(0, 0)) return unknown("no tensor shape");
      c.flops = 0;
      c.bytes = bytes_of(0) + (tensor(1, 0) ? bytes_of(1) : bytes_of(0));
      return c;
    }
    case Model::elementwise:
    case Model::reduction:
    case Model::softmax:
    case Model::norm:
    case Model::norm_backward: {
      double largest = 0, read = 0;
      for (std::size_t i = 0; i < in.size(); ++i)
        if (in[i].tensor) {
          largest = std::max(largest, in[i].numel());
          read += bytes_of(i);
        }
      if (largest == 0) return unknown("no tensor shape");
      c.flops = k->flops_per_element * largest;
      // A reduction's output is small beside its input; the others write a tensor of the largest input's size.
      c.bytes = read + (k->model == Model::reduction ? 0 : largest * elem);
      return c;
    }
    case Model::none: break;
  }
  return unknown("no cost model for this op");
}

std::vector<OpFigures> attribute_ops(const ParsedTrace& trace, const std::function<bool(std::int64_t)>& in_analysed_step,
                                     const std::function<bool(std::uint32_t)>& is_comm_name, std::size_t& shaped_ops) {
  shaped_ops = 0;
  struct Open {
    std::uint32_t tid;
    std::int64_t ts, end;
    std::size_t event;
  };
  std::vector<Open> ops;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const auto& e = trace.events[i];
    if (e.cat != EventCat::cpu_op || e.extra == kNoExtra || trace.collectives[e.extra].input_dims_json == 0) continue;
    if (!in_analysed_step(e.ts_ns)) continue;
    ++shaped_ops;
    ops.push_back({e.tid, e.ts_ns, e.end_ns(), i});
  }
  if (ops.empty()) return {};
  // Launches (CPU side) by correlation id; the GPU work they started, by launch time on each thread.
  auto is_launch = [](const TraceEvent& e) {
    return (e.cat == EventCat::cuda_runtime || e.cat == EventCat::cuda_driver) && e.correlation >= 0;
  };
  IdRange launch_ids;
  for (const auto& e : trace.events)
    if (is_launch(e)) launch_ids.add(e.correlation);
  CorrelationMap<std::size_t> launch_of(launch_ids);
  for (std::size_t i = 0; i < trace.events.size(); ++i)
    if (is_launch(trace.events[i])) launch_of.emplace(trace.events[i].correlation, i);
  struct Launch {
    std::uint32_t tid;
    std::int64_t ts;
    std::size_t gpu_event;
  };
  std::vector<Launch> launches;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const auto& e = trace.events[i];
    if (!is_gpu_activity(e.cat) || e.correlation < 0) continue;
    if (e.cat == EventCat::kernel && is_comm_name(e.name)) continue;
    const std::size_t* launch = launch_of.find(e.correlation);
    if (!launch) continue;
    const auto& l = trace.events[*launch];
    launches.push_back({l.tid, l.ts_ns, i});
  }
  // Outer ops first when two start together, so that the inner one is on top of the stack.
  std::sort(ops.begin(), ops.end(), [](const Open& a, const Open& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
  });
  std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) { return a.tid != b.tid ? a.tid < b.tid : a.ts < b.ts; });

  struct Instance {
    std::size_t gpu_events = 0;
    double gpu_time_us = 0;
  };
  std::unordered_map<std::size_t, Instance> instances;  // by op event
  std::vector<const Open*> stack;
  std::size_t next_op = 0;
  std::uint32_t tid = 0;
  bool first = true;
  for (const auto& l : launches) {
    if (first || l.tid != tid) {
      stack.clear();
      tid = l.tid;
      first = false;
      while (next_op < ops.size() && ops[next_op].tid < tid) ++next_op;
    }
    while (next_op < ops.size() && ops[next_op].tid == tid && ops[next_op].ts <= l.ts) {
      const Open& op = ops[next_op++];
      while (!stack.empty() && stack.back()->end <= op.ts) stack.pop_back();
      stack.push_back(&op);
    }
    while (!stack.empty() && stack.back()->end <= l.ts) stack.pop_back();
    if (stack.empty()) continue;
    auto& inst = instances[stack.back()->event];
    ++inst.gpu_events;
    inst.gpu_time_us += static_cast<double>(trace.events[l.gpu_event].dur_ns) * 1e-3;
  }

  // By signature: name, shapes, types (interned, so ids compare).
  std::map<std::array<std::uint32_t, 3>, OpFigures> by_signature;
  for (const auto& [event, inst] : instances) {
    const auto& e = trace.events[event];
    const auto& args = trace.collectives[e.extra];
    auto& f = by_signature[{e.name, args.input_dims_json, args.input_types_json}];
    if (f.calls == 0) {
      f.name = trace.names[e.name];
      f.shapes = trace.names[args.input_dims_json];
      f.types = trace.names[args.input_types_json];
    }
    ++f.calls;
    f.gpu_events += inst.gpu_events;
    f.gpu_time_us += inst.gpu_time_us;
  }
  std::vector<OpFigures> out;
  out.reserve(by_signature.size());
  for (auto& [key, f] : by_signature) {
    const OpCost cost = op_cost(f.name, f.shapes, f.types);
    f.precision = cost.precision;
    if (cost.flops >= 0) {
      f.flops = cost.flops * static_cast<double>(f.calls);
      f.bytes = cost.bytes * static_cast<double>(f.calls);
    } else {
      f.why = cost.why;
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const OpFigures& a, const OpFigures& b) {
    return a.gpu_time_us != b.gpu_time_us ? a.gpu_time_us > b.gpu_time_us : a.name < b.name;
  });
  return out;
}

void add_ops(std::vector<OpFigures>& into, const std::vector<OpFigures>& ops) {
  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, std::size_t> index;
  for (std::size_t i = 0; i < into.size(); ++i)
    index.emplace(std::make_tuple(std::string_view(into[i].name), std::string_view(into[i].shapes), std::string_view(into[i].types)), i);
  std::vector<OpFigures> added;
  for (const auto& o : ops) {
    auto it = index.find(std::make_tuple(std::string_view(o.name), std::string_view(o.shapes), std::string_view(o.types)));
    if (it == index.end()) {
      added.push_back(o);
      continue;
    }
    auto& t = into[it->second];
    t.calls += o.calls;
    t.gpu_events += o.gpu_events;
    t.gpu_time_us += o.gpu_time_us;
    t.flops = t.flops >= 0 && o.flops >= 0 ? t.flops + o.flops : -1;
    t.bytes = t.bytes >= 0 && o.bytes >= 0 ? t.bytes + o.bytes : -1;
  }
  // Appended after the loop: `index` holds views into `into`'s strings.
  for (auto& o : added) into.push_back(std::move(o));
  std::sort(into.begin(), into.end(), [](const OpFigures& a, const OpFigures& b) {
    return a.gpu_time_us != b.gpu_time_us ? a.gpu_time_us > b.gpu_time_us : a.name < b.name;
  });
}

RooflinePoint roofline_of(const OpFigures& op, std::string_view device_name, const PeakOverrides& peaks) {
  RooflinePoint p;
  if (peaks.tflops) p.peak_tflops = *peaks.tflops;
  else if (auto t = peak_tflops(device_name, op.precision)) p.peak_tflops = *t;
  if (peaks.tbps) p.peak_tbps = *peaks.tbps;
  else if (auto b = peak_tbps(device_name)) p.peak_tbps = *b;
  if (op.flops < 0 || op.bytes <= 0 || op.gpu_time_us <= 0) return p;
  const double seconds = op.gpu_time_us * 1e-6;
  p.achieved_tflops = op.flops / seconds * 1e-12;
  p.achieved_tbps = op.bytes / seconds * 1e-12;
  p.intensity = op.flops / op.bytes;
  if (op.flops == 0) {  // pure data movement (copy, fill): against the bandwidth alone
    if (!(p.peak_tbps > 0)) return p;
    p.bound = "memory";
    p.of_roofline = p.achieved_tbps / p.peak_tbps;
    p.lost_us = std::max(0.0, op.gpu_time_us - op.bytes / (p.peak_tbps * 1e12) * 1e6);
    return p;
  }
  if (!(p.peak_tflops > 0) || !(p.peak_tbps > 0)) return p;
  const double ridge = p.peak_tflops / p.peak_tbps;  // FLOPs per byte where the two roofs meet
  p.bound = p.intensity >= ridge ? "compute" : "memory";
  const double attainable_tflops = std::min(p.peak_tflops, p.intensity * p.peak_tbps);
  p.of_roofline = p.achieved_tflops / attainable_tflops;
  const double ideal_us = op.flops / (attainable_tflops * 1e12) * 1e6;
  p.lost_us = std::max(0.0, op.gpu_time_us - ideal_us);
  return p;
}

}  // namespace scalelens::trace
