// A main() for the fuzz harnesses without libFuzzer: feeds each file named
// on the command line, and every file under each directory named (in
// order, recursively), to LLVMFuzzerTestOneInput once. It builds with any
// compiler, so that the seed corpus and the regression inputs run as a
// plain test (ctest fuzz.replay_*) and a crash file from a campaign can be
// replayed under a debugger.
//
//   tileverify_fuzz_replay_ptx [--ext=.ptx] [--max-seconds=N] FILE_OR_DIR...
//
// --ext: take only files with this extension from directories (files named
// directly are always taken). --max-seconds: fail if one input takes longer
// (default 10, the -timeout of docs/fuzzing.md). Exit status: 0 when every
// input ran within the time; 1 otherwise, or when no input was found.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

bool has_prefix(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// The files of `root` (itself if a file), sorted, so that runs are repeatable.
std::vector<fs::path> inputs_under(const fs::path& root, const std::string& ext) {
  std::vector<fs::path> found;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    found.push_back(root);
    return found;
  }
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && (ext.empty() || it->path().extension() == ext)) found.push_back(it->path());
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  std::string ext;
  double max_seconds = 10;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (has_prefix(a, "--ext=")) {
      ext = a.substr(6);
    } else if (has_prefix(a, "--max-seconds=")) {
      max_seconds = std::atof(a.c_str() + 14);
    } else if (has_prefix(a, "-")) {
      std::fprintf(stderr, "ignoring option %s (libFuzzer's options need the libFuzzer build)\n", a.c_str());
    } else {
      for (fs::path& p : inputs_under(a, ext)) inputs.push_back(std::move(p));
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs: give files or directories (with --ext=.ptx, only .ptx files from directories)\n");
    return 1;
  }
  int slow = 0;
  double total = 0, slowest = 0;
  std::string slowest_name;
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", p.string().c_str());
      return 1;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto t0 = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    total += s;
    if (s > slowest) {
      slowest = s;
      slowest_name = p.string();
    }
    if (s > max_seconds) {
      std::fprintf(stderr, "too slow: %s took %.2f s (limit %.2f s)\n", p.string().c_str(), s, max_seconds);
      ++slow;
    }
  }
  std::printf("replayed %zu inputs in %.2f s; slowest %.3f s: %s\n", inputs.size(), total, slowest, slowest_name.c_str());
  return slow ? 1 : 0;
}
