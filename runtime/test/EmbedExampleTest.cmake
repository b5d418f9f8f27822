# Installs the runtime to a fresh prefix, builds examples/embed against it
# with find_package(dlc) and runs it on a module written by
# dlc_write_test_module: the package works for a project outside this tree.
#
# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DWRITER=...
#       -DGENERATOR=... -DCXX=... -P EmbedExampleTest.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
    --component runtime)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${WORK_DIR}/build
    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WRITER} ${WORK_DIR}/linear.dlcm)
run(${WORK_DIR}/build/embed ${WORK_DIR}/linear.dlcm 3 2)
message("${output}")
foreach(expected
    "train_step(x: float32[8,5] (input), labels: int64[8] (label)) -> (loss: float32[] (loss))"
    "train_step 2: loss = "
    "forward: logits: float32[8,3] (output)")
  string(FIND "${output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the example's output lacks '${expected}'")
  endif()
endforeach()
