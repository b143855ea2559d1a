# A Spack recipe for scalelens (HPC sites: `spack repo add packaging/spack` from a clone, then
# `spack install scalelens +python +mpi`). Written to Spack's CMakePackage conventions: the CMake
# options of this repository's CMakeLists.txt map to variants; tests and fuzzers are not built.

from spack.package import *


class Scalelens(CMakePackage):
    """How well multi-GPU training scales, why it does not scale better, and at what cost:
    throughput, speedup and efficiency, communication versus computation, GPU utilization,
    energy and a scaling model, from a folder of runs (scalelens report), measured without
    changes to the training code (scalelens run, scalelens sweep under SLURM)."""

    homepage = "https://scalelens.invalid"
    git = "https://scalelens.invalid/scalelens.git"
    maintainers("scalelens")
    license("Apache-2.0")

    version("main", branch="main")

    variant("python", default=True, description="The scalelens Python module (pybind11)")
    variant("mpi", default=True, description="libscalelens-mpi: MPI communication per step (scalelens run --mpi-comm)")
    variant("web", default=False, description="Build the interactive dashboard (needs node and npm at build time)")

    depends_on("cmake@3.25:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("simdjson")
    depends_on("libdeflate")
    depends_on("zlib-api")
    depends_on("cli11", type="build")
    depends_on("fmt@9:")
    depends_on("eigen@3.3:", type="build")
    depends_on("re2")
    depends_on("cpp-httplib", type="build")
    depends_on("gnuplot", type="run")
    depends_on("mpi", when="+mpi")
    depends_on("python@3.9:", when="+python", type=("build", "run"))
    depends_on("py-pybind11@2.10:", when="+python", type="build")
    depends_on("py-pandas", when="+python", type="run")
    depends_on("node-js", when="+web", type="build")
    depends_on("npm", when="+web", type="build")

    generator("ninja")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("SCALELENS_BUILD_TESTS", False),
            self.define("SCALELENS_BUILD_FUZZERS", False),
            self.define_from_variant("SCALELENS_BUILD_PYTHON", "python"),
            self.define_from_variant("SCALELENS_BUILD_WEB", "web"),
        ]
        if spec.satisfies("+python"):
            args.append(self.define("Python3_EXECUTABLE", spec["python"].command.path))
            args.append(self.define("SCALELENS_PYTHON_INSTALL_DIR", python_platlib.replace(prefix + "/", "")))
        if spec.satisfies("~mpi"):
            args.append(self.define("CMAKE_DISABLE_FIND_PACKAGE_MPI", True))
        return args

    def setup_run_environment(self, env):
        if self.spec.satisfies("+python"):
            env.prepend_path("PYTHONPATH", python_platlib)

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_installed(self):
        scalelens = Executable(self.prefix.bin.scalelens)
        scalelens("--version")
