// verify_* (include/tileverify/testing.hpp): the checks a kernel author's
// unit tests call, their answers as a bool and a text to print.
#include "tileverify/testing.hpp"

#include <exception>
#include <new>
#include <string>

namespace tileverify {

namespace {

Verification from_report(const Report& r, Outcome expected) {
  Verification v;
  v.verdict = r.verdict;
  v.ok = r.verdict == expected;
  std::string text;
  try {
    text = r.text();
  } catch (...) {
    text = r.error;
  }
  v.explanation = v.ok ? std::string(outcome_name(r.verdict)) + ", as expected\n" + text
                       : "expected " + std::string(outcome_name(expected)) + ", got " + outcome_name(r.verdict) + "\n" + text;
  return v;
}

Verification failed(const std::string& why) {
  Verification v;
  v.explanation = why;
  return v;
}

}  // namespace

Verification verify_verdict(const std::string& spec_path, Outcome expected, const DecideLimits& limits) {
  try {
    SpecResult loaded = load_spec(spec_path);
    if (!loaded.spec) return failed("the spec does not load: " + loaded.error);
    const Spec& s = *loaded.spec;
    if (s.opt) return from_report(check_equivalence(s, limits), expected);
    RunLimits run;
    run.deadline = limits.deadline;
    run.max_memory_bytes = limits.max_memory_bytes;
    return from_report(check(s, run), expected);
  } catch (const std::bad_alloc&) {
    return failed("out of memory while checking " + spec_path);
  } catch (const std::exception& e) {
    return failed(std::string("internal error while checking ") + spec_path + ": " + e.what());
  }
}

Verification verify_equivalent(const std::string& spec_path, const DecideLimits& limits) {
  return verify_verdict(spec_path, Outcome::Equivalent, limits);
}

Verification verify_on_gpu(const std::string& spec_path, const DifferentialOptions& options) {
  try {
    SpecResult loaded = load_spec(spec_path);
    if (!loaded.spec) return failed("the spec does not load: " + loaded.error);
    const DifferentialReport d = differential_test(*loaded.spec, options);
    Verification v;
    v.verdict = Outcome::Ok;
    v.skipped = d.verdict == DifferentialVerdict::NoGpu;
    v.ok = d.verdict == DifferentialVerdict::Agree || v.skipped;
    v.explanation = d.text();
    return v;
  } catch (const std::exception& e) {
    return failed(std::string("internal error while testing ") + spec_path + ": " + e.what());
  }
}

}  // namespace tileverify
