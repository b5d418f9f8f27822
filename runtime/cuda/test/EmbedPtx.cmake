# Wraps the PTX file PTX into the C++ header HEADER as a string constant,
# so the GPU tests carry their kernels (and run from any directory, on a
# machine that has only the test binaries).
file(READ ${PTX} text)
file(WRITE ${HEADER}
  "// Generated from TestKernels.cu by nvcc -ptx; do not edit.\n"
  "static const char kTestKernelsPtx[] = R\"ptx(${text})ptx\";\n")
