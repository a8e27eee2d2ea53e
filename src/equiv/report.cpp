// Reports: the verdict's exit code, the text for people and the JSON.
#include "tileverify/equiv.hpp"

#include "../util/source_name.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

namespace tileverify {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Equivalent: return "equivalent";
    case Outcome::NotEquivalent: return "not_equivalent";
    case Outcome::Race: return "race";
    case Outcome::Deadlock: return "deadlock";
    case Outcome::OutOfBounds: return "out_of_bounds";
    case Outcome::Uninitialized: return "uninitialized";
    case Outcome::Unsupported: return "unsupported";
    case Outcome::Unknown: return "unknown";
    case Outcome::Ok: return "ok";
    case Outcome::Error: return "error";
    case Outcome::Trap: return "trap";
    case Outcome::PayloadsAgree: return "payloads_agree";
    case Outcome::PayloadsDiffer: return "payloads_differ";
    case Outcome::BarrierDivergence: return "barrier_divergence";
    case Outcome::LaunchContract: return "launch_contract";
  }
  return "error";
}


int Report::exit_code() const {
  switch (verdict) {
    case Outcome::Equivalent:
    case Outcome::PayloadsAgree:
    case Outcome::Ok: return 0;
    case Outcome::PayloadsDiffer:
    case Outcome::NotEquivalent: return 1;
    case Outcome::Race:
    case Outcome::Deadlock:
    case Outcome::OutOfBounds:
    case Outcome::Uninitialized:
    case Outcome::BarrierDivergence:
    case Outcome::LaunchContract:
    case Outcome::Trap: return 2;
    case Outcome::Unsupported:
    case Outcome::Unknown: return 3;
    case Outcome::Error: return 4;
  }
  return 4;
}

namespace {

// The first `most` entries of a counterexample's ", "-separated input
// values: an attention kernel's has 65 K of them (half a megabyte on one
// line), which the JSON report keeps whole.
std::string first_inputs(const std::string& list, std::size_t most) {
  std::size_t count = 1, cut = std::string::npos;
  for (std::size_t pos = list.find(", "); pos != std::string::npos; pos = list.find(", ", pos + 2))
    if (count++ == most) cut = pos;
  if (cut == std::string::npos) return list;
  return list.substr(0, cut) + ", ... (" + std::to_string(count) + " inputs in all; --json lists every one)";
}

using util::source_name;
using util::source_names_in;

// Whether d is the report's error itself, given as a diagnostic for the JSON
// (an unreadable kernel, a spec that does not fit it): the text shows the
// error line alone.
bool restates(const Diagnostic& d, const std::string& error) {
  return !error.empty() && (d.kind == DiagKind::BadInput || d.kind == DiagKind::Unsupported) &&
         (d.message == error || d.loc.with_source() + ": error: " + d.message == error);
}

// A message as the report shows it: names as the CUDA source spells them
// (nvcc's PTX has red5's `static __shared__ float s[]` as _ZZ4red5PKfPfE1s).
// Bad input keeps the names of the files it quotes (the kernel names a spec
// may use, listed mangled and demangled): the user fixes those files.
std::string shown(const Diagnostic& d) {
  return d.kind == DiagKind::BadInput ? d.message : source_names_in(d.message);
}
// The diagnostic as the text shows it. The PTX instructions quoted in its
// accesses stay as they are.
Diagnostic in_source_names(Diagnostic d) {
  d.message = shown(d);
  d.detail = source_names_in(d.detail);
  d.buffer = source_name(d.buffer);
  return d;
}

// An input value of a counterexample in the JSON report: a number where JSON
// holds it exactly (an integer up to 2^53, else a double equal to the
// rational), else the exact rational as a string ("1/3").
nlohmann::json input_value(const Rational& v) {
  std::int64_t n = 0, d = 0;
  if (v.to_int64_pair(&n, &d) && d == 1 && n <= (std::int64_t(1) << 53) && n >= -(std::int64_t(1) << 53)) return n;
  const double x = v.to_double();
  if (std::isfinite(x) && Rational::from_double(x) == v) return x;
  return v.str();
}

// "CTA (2,0,0)", "CTAs (2,0,0) and (3,0,0)", "CTAs (1,0,0), (2,0,0) and (3,0,0)".
std::string ctas_text(const std::vector<Dim3>& ctas) {
  std::string s = ctas.size() == 1 ? "CTA " : "CTAs ";
  for (std::size_t i = 0; i < ctas.size(); ++i) {
    if (i) s += i + 1 == ctas.size() ? " and " : ", ";
    s += "(" + std::to_string(ctas[i].x) + "," + std::to_string(ctas[i].y) + "," + std::to_string(ctas[i].z) + ")";
  }
  return s;
}

// The verdict line of launch_contract: which CTAs of which kernel, and what
// to do about it; the diagnostics below it give each CTA's copy.
std::string launch_contract_headline(const std::vector<ContractScan>& scans) {
  for (const ContractScan& s : scans) {
    if (s.breaking.empty()) continue;
    const bool more = s.breaking.size() >= 4 && s.ctas_run < s.grid_ctas;
    return "UNSAFE (launch_contract): " + ctas_text(s.breaking) + " of " + s.kernel +
           (s.breaking.size() == 1 ? " issues" : " issue") + " TMA copies that trap on a GPU (" + std::to_string(s.ctas_run) + " of the " +
           std::to_string(s.grid_ctas) + " CTAs of the grid run" + (more ? "; the scan stops at 4 such CTAs" : "") +
           ")\n  the launch starts CTAs that own no tile: launch only the CTAs that have one, or let a CTA past the "
           "last tile return before its TMA copies\n";
  }
  return "UNSAFE (launch_contract): a TMA copy traps on a GPU\n";
}

}  // namespace

std::string Report::text() const {
  std::ostringstream os;
  // A shard's verdict is about its share only; merge gives the check's.
  if (shard && shard->whole && shard->index != 0 && (verdict == Outcome::Equivalent || verdict == Outcome::Ok)) {
    os << "NOTHING TO DO in shard " << shard->index << " of " << shard->count << " (check " << shard->fingerprint
       << "): shard 0 checks the whole grid";
    if (!cta_classes_unused.empty()) os << " (" << cta_classes_unused << ")";
    os << "; `tileverify merge` takes its verdict\n";
    return os.str();
  }
  if (shard && !shard->whole && verdict == Outcome::Equivalent) {
    os << "EQUIVALENT on shard " << shard->index << " of " << shard->count << ": its " << stats.comparisons
       << " comparisons are proved, for " << stats.outputs_compared
       << " output elements; `tileverify merge` of every shard's --json report gives the check's verdict\n";
  }
  switch (shard && !shard->whole && verdict == Outcome::Equivalent ? Outcome::Error : verdict) {
    case Outcome::Error:
      if (verdict == Outcome::Equivalent) break;  // the shard's line above
      // Launch errors come as diagnostics (below), with the kernel they concern.
      os << "ERROR: " << (error.empty() && !diagnostics.empty() ? "the spec does not fit the kernel" : error) << "\n";
      break;
    case Outcome::Equivalent:
      os << "EQUIVALENT: every output element is the same function of the inputs (" << stats.proved << " of "
         << stats.outputs_compared << " proved)\n";
      break;
    case Outcome::Ok: os << "OK: no race, deadlock, out-of-bounds or uninitialized access\n"; break;
    case Outcome::Trap: os << "UNSAFE (trap): the launch would fail on a GPU (a failed assert(), a trap, or a fault)\n"; break;
    case Outcome::NotEquivalent: os << "NOT EQUIVALENT\n"; break;
    case Outcome::PayloadsAgree:
      os << "PAYLOADS AGREE: bit-identical FpSan payloads on all " << stats.outputs_compared << " outputs for "
         << stats.trials << " random inputs (evidence, not a proof: `tileverify equiv` proves)\n";
      break;
    case Outcome::PayloadsDiffer: os << "PAYLOADS DIFFER\n"; break;
    case Outcome::Unknown:
      // A payload check compares outputs but decides none: its unknown is a limit.
      if (stats.outputs_compared && stats.trials == 0)
        os << "UNKNOWN: not every output could be decided (" << stats.proved << " of " << stats.outputs_compared
           << " proved)\n";
      else if (!error.empty())
        os << "UNKNOWN: " << error << "\n";
      else
        os << "UNKNOWN: a limit was reached before the check finished\n";
      break;
    case Outcome::Unsupported:
      os << "UNSUPPORTED: outside what tileverify verifies\n";
      if (!error.empty()) os << "  " << error << "\n";
      break;
    case Outcome::LaunchContract: os << launch_contract_headline(contract_scans); break;
    default: os << "UNSAFE (" << outcome_name(verdict) << ")\n"; break;
  }
  for (const Diagnostic& d : diagnostics)
    if (!restates(d, error)) os << in_source_names(d).text();
  // Findings that leave the verdict alone come after the evidence for it.
  for (const Diagnostic& d : notes)
    os << (d.kind == DiagKind::BarrierDivergence || d.warning ? "warning: " : "note: ") << in_source_names(d).text();
  if (mismatch) {
    os << (verdict == Outcome::Unknown ? "  first undecided output: " : "  first differing output: ") << mismatch->output << "[" << mismatch->element << "]";
    if (mismatch->cta.x || mismatch->cta.y || mismatch->cta.z)
      os << " (CTA " << mismatch->cta.x << "," << mismatch->cta.y << "," << mismatch->cta.z << ")";
    os << "\n";
    os << "    ref: " << source_names_in(mismatch->ref_expr) << "\n";
    os << "    opt: " << source_names_in(mismatch->opt_expr) << "\n";
    if (verdict == Outcome::PayloadsDiffer) {
      os << "  " << source_names_in(mismatch->why) << "\n";
    } else if (verdict == Outcome::NotEquivalent && !mismatch->counterexample.lhs_value.empty()) {
      os << "  counterexample: " << first_inputs(mismatch->why, 24) << "\n";
      os << "    ref gives " << mismatch->counterexample.lhs_value << "\n";
      os << "    opt gives " << mismatch->counterexample.rhs_value << "\n";
    } else if (!mismatch->why.empty()) {
      os << "  " << source_names_in(mismatch->why) << "\n";
    }
  }
  if (!cta_classes.empty()) {
    // Per kernel: its classes, each with its representative and the box of its CTAs.
    std::string kernel;
    std::size_t shown = 0;  // of this kernel's classes; a few are listed
    for (const CtaClassSummary& c : cta_classes) {
      if (c.kernel != kernel) {
        kernel = c.kernel;
        shown = 0;
        std::size_t n = 0;
        std::uint64_t ctas = 0;
        for (const CtaClassSummary& d : cta_classes)
          if (d.kernel == kernel) {
            ++n;
            ctas += d.ctas;
          }
        os << "  CTA classes of " << kernel << ": " << n << (n == 1 ? " class" : " classes") << " for " << ctas
           << (ctas == 1 ? " CTA" : " CTAs") << "\n";
      }
      if (++shown > 8) {
        if (shown == 9) os << "    ... (--json lists every class)\n";
        continue;
      }
      os << "    CTA (" << c.representative.x << "," << c.representative.y << "," << c.representative.z
         << ") stands for " << c.ctas << (c.ctas == 1 ? " CTA" : " CTAs") << " (x " << c.low.x << "-" << c.high.x
         << ", y " << c.low.y << "-" << c.high.y << ", z " << c.low.z << "-" << c.high.z << ")\n";
    }
    if (stats.comparisons)
      os << "  " << stats.outputs_compared << " output elements, " << stats.comparisons
         << " distinct comparisons after renaming\n";
  }
  if (shard && shard->whole && shard->index != 0) {
    os << "  shard " << shard->index << " of " << shard->count << ": nothing to do here, shard 0 checks the whole grid"
       << (cta_classes_unused.empty() ? std::string() : " (" + cta_classes_unused + ")") << "\n";
  } else if (!cta_classes_unused.empty()) {
    // With classes listed above, the other kernel's grid ran CTA by CTA.
    os << "  CTA by CTA" << (cta_classes.empty() ? " (no CTA classes)" : "") << ": " << cta_classes_unused << "\n";
  }
  if (shard && !(shard->whole && shard->index != 0))
    os << "  shard " << shard->index << " of " << shard->count << " (check " << shard->fingerprint << "): "
       << (shard->whole ? std::string("the whole check")
                        : std::to_string(stats.comparisons) + " of the " + std::to_string(shard->comparisons_total) +
                              " comparisons")
       << "; `tileverify merge` combines the shards' --json reports\n";
  if (verdict != Outcome::Error)
    os << "  time: parse " << stats.parse_seconds << " s, evaluate " << stats.eval_seconds << " s, decide "
     << stats.decide_seconds << " s\n";
  return os.str();
}

std::string Report::json() const {
  nlohmann::json j;
  j["verdict"] = outcome_name(verdict);
  // Names as the source spells them, and as the PTX does (docs/reports.md).
  auto diagnostic = [](const Diagnostic& d) {
    nlohmann::json x;
    x["kind"] = diag_kind_name(d.kind);
    x["message"] = shown(d);
    x["message_ptx"] = d.message;
    x["location"] = d.loc.text();
    if (!d.loc.source.empty()) x["source"] = d.loc.source.str();  // the CUDA line (.loc debug info)
    x["threads"] = d.threads;
    // A cluster's run (or two CTAs of a grid) numbers threads across CTAs:
    // each thread as the text names it, by its CTA.
    if (d.names.per_cta != 0) {
      x["thread_names"] = nlohmann::json::array();
      for (std::uint32_t t : d.threads) x["thread_names"].push_back("thread " + d.names.one(t));
    }
    // As the text report prints it: "warning:" rather than "note:".
    if (d.warning || d.kind == DiagKind::BarrierDivergence) x["warning"] = true;
    if (!d.buffer.empty()) {
      x["buffer"] = d.buffer;
      x["buffer_name"] = source_name(d.buffer);
      x["element"] = d.element;
      // "element" counts in the buffer's unit, which for a kernel's own
      // untyped array is its first access's width: the byte is the offset
      // that means the same in every kernel.
      if (d.byte >= 0 || d.width != 0) {
        x["byte"] = d.byte;
        x["width"] = d.width;
      }
    }
    for (const AccessInfo& a : d.accesses) {
      nlohmann::json ax = {{"thread", a.thread},
                           {"write", a.write},
                           {"kind", a.kind.empty() ? (a.write ? "write" : "read") : a.kind},
                           {"location", a.loc.text()},
                           {"instruction", a.instr}};
      if (!a.loc.source.empty()) ax["source"] = a.loc.source.str();
      if (d.names.per_cta != 0 && a.thread / d.names.per_cta < d.names.ctas.size()) {
        const ThreadNames::Cta& c = d.names.cta_of(a.thread);
        ax["thread_name"] = "thread " + d.names.one(a.thread);
        ax["cta"] = {c.cta.x, c.cta.y, c.cta.z};
        ax["thread_in_cta"] = a.thread % d.names.per_cta;
      }
      x["accesses"].push_back(ax);
    }
    return x;
  };
  j["diagnostics"] = nlohmann::json::array();
  for (const Diagnostic& d : diagnostics) j["diagnostics"].push_back(diagnostic(d));
  j["notes"] = nlohmann::json::array();
  for (const Diagnostic& d : notes) j["notes"].push_back(diagnostic(d));
  if (!error.empty()) j["error"] = error;
  if (!contract_scans.empty()) {
    nlohmann::json scans = nlohmann::json::array();
    for (const ContractScan& c : contract_scans) {
      nlohmann::json x = {{"kernel", c.kernel}, {"ctas_run", c.ctas_run}, {"grid_ctas", c.grid_ctas}};
      x["breaking"] = nlohmann::json::array();
      for (const Dim3& d : c.breaking) x["breaking"].push_back({d.x, d.y, d.z});
      if (!c.stopped.empty()) x["stopped"] = c.stopped;
      x["seconds"] = c.seconds;
      scans.push_back(x);
    }
    j["launch_contract"] = scans;
  }
  if (!cta_classes.empty()) {
    nlohmann::json classes = nlohmann::json::array();
    for (const CtaClassSummary& c : cta_classes)
      classes.push_back({{"kernel", c.kernel},
                         {"representative", {c.representative.x, c.representative.y, c.representative.z}},
                         {"ctas", c.ctas},
                         {"low", {c.low.x, c.low.y, c.low.z}},
                         {"high", {c.high.x, c.high.y, c.high.z}}});
    j["cta_classes"] = classes;
  }
  if (!cta_classes_unused.empty()) j["cta_classes_unused"] = cta_classes_unused;
  if (shard)
    j["shard"] = {{"index", shard->index},
                  {"count", shard->count},
                  {"fingerprint", shard->fingerprint},
                  {"check", shard->check},
                  {"comparisons_total", shard->comparisons_total},
                  {"elements_total", shard->elements_total},
                  {"whole", shard->whole},
                  {"plan", shard->plan}};
  if (mismatch) {
    nlohmann::json m;
    m["output"] = mismatch->output;
    m["element"] = mismatch->element;
    m["ref"] = source_names_in(mismatch->ref_expr);
    m["opt"] = source_names_in(mismatch->opt_expr);
    if (!mismatch->counterexample.lhs_value.empty()) {
      // Tensor name -> its elements' values (null: an element the
      // counterexample leaves free).
      nlohmann::json inputs = nlohmann::json::object();
      for (const auto& [name, values] : mismatch->inputs) {
        nlohmann::json list = nlohmann::json::array();
        for (const std::optional<Rational>& v : values) list.push_back(v ? input_value(*v) : nlohmann::json());
        inputs[name] = list;
      }
      m["inputs"] = inputs;
      m["ref_value"] = mismatch->counterexample.lhs_value;
      m["opt_value"] = mismatch->counterexample.rhs_value;
    } else {
      m["reason"] = source_names_in(mismatch->why);
    }
    j["counterexample"] = m;
  }
  j["stats"] = {{"parse_seconds", stats.parse_seconds},
                {"eval_seconds", stats.eval_seconds},
                {"decide_seconds", stats.decide_seconds},
                {"outputs_compared", stats.outputs_compared},
                {"proved", stats.proved},
                {"comparisons", stats.comparisons},
                {"ref_block_syncs", stats.ref.block_syncs},
                {"ref_warp_syncs", stats.ref.warp_syncs},
                {"opt_block_syncs", stats.opt.block_syncs},
                {"opt_warp_syncs", stats.opt.warp_syncs}};
  // Messages quote file names and PTX text, which need not be UTF-8: such
  // bytes become U+FFFD rather than an exception.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tileverify
