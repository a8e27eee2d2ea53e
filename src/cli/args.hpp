// Command-line values of the tileverify command, read with range checks.
//
// tileverify runs in CI jobs, where a value read wrongly is worse than a
// refusal: `--cta 4294967296` must not become CTA 0, `--timeout 1e300` must
// not overflow a clock, `--threads 1e8` must not start a hundred million
// threads. Each function returns "" and sets *out, or a message that names
// the option, the value given and what is allowed (the caller exits 4).
#pragma once

#include "tileverify/eval.hpp"

#include <cstdint>
#include <map>
#include "../util/units.hpp"

#include <string>

namespace tileverify::cli {

// A whole number from lo to hi, in decimal digits (no sign, fraction or
// exponent). `meaning` says what the option counts, for the message.
std::string parse_count(const std::string& option, const std::string& text, std::uint64_t lo, std::uint64_t hi,
                        const std::string& meaning, std::uint64_t* out);

// --cta x,y,z: 1 to 3 whole numbers below 2^31 (CUDA's largest grid x is
// 2^31 - 1); missing components are 0.
std::string parse_cta(const std::string& text, Dim3* out);
// --shard I/N: shard I (0 to N - 1) of N, N from 2 to 4096.
std::string parse_shard(const std::string& text, unsigned* index, unsigned* count);

// --timeout SECONDS: 0 (no limit) or a positive finite number of seconds up
// to kMaxTimeoutSeconds, in plain decimal notation (1.5, 30, 2e3).
constexpr double kMaxTimeoutSeconds = 1e6;
constexpr double kDefaultTimeoutSeconds = 300;
std::string parse_timeout(const std::string& text, double* seconds);
// --rel / --abs of `tileverify test`: a tolerance from 0 to 1e6.
std::string parse_tolerance(const std::string& option, const std::string& text, double* value);

// --max-memory SIZE: bytes, with an optional binary suffix K, M, G or T
// (also KiB, MiB, GiB, TiB): 512M is 512 * 2^20 bytes. Positive.
std::string parse_size(const std::string& option, const std::string& text, std::uint64_t* bytes);

// --size NAME=VALUE (repeatable): a size of the spec's "sizes" and its value,
// a whole number from 1 to 2^48 (docs/cli.md, "Sizes and boundary
// suites"). Adds it to *sizes; a name given twice is an error. Whether the
// spec has that size is for the spec reader to say.
std::string parse_size_choice(const std::string& text, std::map<std::string, std::int64_t>* sizes);

// --shapes boundary|suite: run the command over the spec's boundary suite
// or its "suite" list.
std::string parse_shapes(const std::string& text, bool* boundary);

// Bytes for people: "512 MiB", "11.7 GiB" (the library's reports write them so too).
using util::size_text;

}  // namespace tileverify::cli
