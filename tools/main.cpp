// dash-attn: command-line entry point. `plan` runs anywhere; `bench` needs a CUDA GPU; with no
// subcommand it benchmarks on the GPU when there is one and otherwise shows the planner.
#include <cstdio>
#include <cstring>

#include "bench_cmd.h"
#include "plan_cmd.h"

namespace {

void usage() {
  std::printf(
      "usage: dash-attn [plan|bench] [flags]\n"
      "  plan    simulate the DASH backward schedules on a persistent grid and recommend one\n"
      "          (no GPU needed; dash-attn plan --help)\n"
      "  bench   run and time the attention backward kernels on the GPU (dash-attn bench --help)\n"
      "With no subcommand: bench on the GPU if there is one, otherwise the default plan with a\n"
      "Gantt chart written to plan.svg.\n");
}

bool has_gpu() {
#if defined(DASH_NO_CUDA)
  return false;
#else
  return dash_has_cuda_device();
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
                    std::strcmp(argv[1], "help") == 0)) {
    usage();
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "plan") == 0) return plan_main(argc - 2, argv + 2);
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) {
#if defined(DASH_NO_CUDA)
    std::fprintf(stderr, "dash-attn bench: this build has no CUDA (configured with DASH_BUILD_CUDA=OFF)\n");
    return 2;
#else
    return bench_main(argc - 2, argv + 2);
#endif
  }
  if (argc >= 2) {
    std::fprintf(stderr, "dash-attn: unknown subcommand '%s'\n", argv[1]);
    usage();
    return 2;
  }
  if (has_gpu()) {
#if !defined(DASH_NO_CUDA)
    char prog[] = "bench";
    char* args[] = {prog, nullptr};
    return bench_main(0, args + 1);
#endif
  }
  std::printf("dash-attn: no CUDA GPU found, so running the schedule planner instead of the benchmark\n\n");
  char flag[] = "--gantt";
  char file[] = "plan.svg";
  char* args[] = {flag, file, nullptr};
  return plan_main(2, args);
}
