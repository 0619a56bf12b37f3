// dash-attn: the `bench` subcommand (GPU), implemented in tools/bench_cmd.cpp.
#pragma once

int bench_main(int argc, char** argv);
bool dash_has_cuda_device();
