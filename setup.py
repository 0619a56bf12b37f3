"""Build and install the `dash_attn` PyTorch package.

    pip install --no-build-isolation .          # from the repo root, on a machine with nvcc 13

The extension `dash_attn._C` compiles the project's own sources (kernels, C++ API, planner)
together with the PyTorch binding in python/dash_attn/csrc/; torch headers are included only
there. Kernels are built for sm_90a only (Hopper, wgmma/setmaxnreg need the arch-specific
target). MAX_JOBS sets the number of parallel compile jobs (ninja).

DASH_ATTN_NO_EXTENSION=1 installs the pure-Python part only (argument checks and the fake /
meta implementations work; calling the kernels raises an ImportError that says so).
"""
import glob
import os

# Before importing torch.utils.cpp_extension: only sm_90a. Our nvcc flags carry an explicit
# -gencode, so torch adds no arch flags of its own; this also covers code paths that read it.
os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"

from setuptools import setup  # noqa: E402

ROOT = os.path.dirname(os.path.abspath(__file__))


def _rel_glob(pattern):
    return sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, pattern)))


def _extensions():
    if os.environ.get("DASH_ATTN_NO_EXTENSION", "0") not in ("", "0"):
        return [], {}
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    sources = (
        ["python/dash_attn/csrc/binding.cpp"]
        + _rel_glob("src/kernels/*.cu")
        + ["src/api/attention_api.cu"]
        + _rel_glob("src/api/*.cpp")
        + _rel_glob("src/schedule/*.cpp")
    )
    nvcc_flags = [
        "-gencode", "arch=compute_90a,code=sm_90a",
        "-std=c++20",
        "--expt-relaxed-constexpr",
        "-O3",
        "-lineinfo",
        # torch adds -D__CUDA_NO_HALF*/BFLOAT16_CONVERSIONS__; the CMake build of the same
        # kernels has none of them: undo them so both builds compile the same code.
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "-U__CUDA_NO_HALF2_OPERATORS__",
    ]
    ext = CUDAExtension(
        name="dash_attn._C",
        sources=sources,
        include_dirs=[os.path.join(ROOT, "include"), os.path.join(ROOT, "src")],
        extra_compile_args={"cxx": ["-std=c++20", "-O3"], "nvcc": nvcc_flags},
    )
    return [ext], {"build_ext": BuildExtension.with_options(use_ninja=True)}


ext_modules, cmdclass = _extensions()

setup(
    name="dash_attn",
    version="0.1.0",
    description="Deterministic attention (forward + schedule-driven deterministic backward) for Hopper",
    package_dir={"": "python"},
    packages=["dash_attn"],
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    python_requires=">=3.9",
    install_requires=["torch>=2.4"],  # torch.library.custom_op; the build links the installed torch
    zip_safe=False,
    # Not ./build: that is the CMake build folder (CMakePresets.json).
    options={"build": {"build_base": "build-py"}},
)
