# SPDX-License-Identifier: MIT
# Test registration helpers: unit tests run on one process, MPI tests at several rank counts.
find_package(GTest REQUIRED)

# Open MPI refuses more ranks than cores unless told; and refuses root unless told.
set(JSMF_OVERSUBSCRIBE "")
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiexec_version
                ERROR_QUIET)
if(_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(JSMF_OVERSUBSCRIBE --oversubscribe)
endif()
set(JSMF_TEST_ENVIRONMENT
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
  # Containers often forbid the cross-memory-attach syscalls Open MPI's vader BTL uses.
  OMPI_MCA_btl_vader_single_copy_mechanism=none
  # ctest runs tests side by side (jobs/test.sh: one more than the cores, for the tests that
  # mostly wait): a rank waiting in MPI yields its core to the other tests' processes
  # instead of spinning on it (Open MPI does so by itself only where one mpirun alone
  # oversubscribes the node).
  OMPI_MCA_mpi_yield_when_idle=1
  # Open MPI probes every transport it was built with at each start (UCX, libfabric, PSM)
  # before it picks ob1 over shared memory, as it does on one node: naming ob1 skips the
  # probes. The tests start ~1,000 short MPI jobs; a 4-rank start and end took 0.82 s and
  # 1.03 core-s with the probes, 0.50 s and 0.82 core-s without (the same pml runs).
  OMPI_MCA_pml=ob1)
if(NOT JSMF_SANITIZE)
  # When a rank exits non-zero, Open MPI's mpirun signals the job's other processes and
  # waits odls_base_sigkill_timeout (1 s) before SIGKILL, twice: every refused input the
  # tests check (a few hundred) took 2 s more than its work, whether or not the other
  # ranks had ended already (mpirun -np 1 sh -c 'exit 2': 2.05 s; at 0, 0.05 s). jsmf's
  # ranks agree on a failure, the root removes its partial output and prints, and they
  # leave MPI_Finalize's fence together, so what the tests check is done before any rank
  # exits. (A second stop signal ends each rank at once, after it has removed the partial
  # file, core/stop.cpp; a rank not yet signalled is now killed at once too.) Not in the
  # sanitized build: there a rank past the fence is still checking for leaks.
  list(APPEND JSMF_TEST_ENVIRONMENT OMPI_MCA_odls_base_sigkill_timeout=0)
endif()
if(JSMF_SANITIZE)
  # Any report ends the process with an error; leaks are checked against the checked-in
  # suppressions of Open MPI's own (tests/sanitize/lsan.supp says why each is there).
  list(APPEND JSMF_TEST_ENVIRONMENT
    "ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1"
    "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitize/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# The tests' own sources at -O1 (the library they test keeps its -O3): they compiled in 444
# core-s of the build's 1,095 at -O3, 326 at -O1 (fit_test.cpp alone 46 s, 28 s), and their time
# is in the library's code, not their own.
set(JSMF_TEST_COMPILE_OPTIONS -O1)

# jsmf_add_test(NAME COMMAND ...): add_test, keeping the command for
# jsmf_add_kernel_copies (CMake cannot read a test's command back).
function(jsmf_add_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_property(GLOBAL PROPERTY JSMF_TEST_COMMAND_${name} "${ARGN}")
endfunction()

# jsmf_add_kernel_copies(CORETYPE TEST ...): each test again as TEST.CORETYPE, with
# OpenBLAS's CORETYPE kernels forced (labels "kernels" and CORETYPE; its other properties
# the test's), in the same ctest run, scheduled beside the others, not after them.
function(jsmf_add_kernel_copies coretype)
  foreach(t IN LISTS ARGN)
    get_property(command GLOBAL PROPERTY JSMF_TEST_COMMAND_${t})
    if(NOT command)
      message(FATAL_ERROR "test ${t} was not added by jsmf_add_test: no copy under ${coretype}")
    endif()
    add_test(NAME ${t}.${coretype} COMMAND ${command})
    foreach(property TIMEOUT PROCESSORS COST)
      get_test_property(${t} ${property} value)
      if(value)
        set_tests_properties(${t}.${coretype} PROPERTIES ${property} ${value})
      endif()
    endforeach()
    get_test_property(${t} ENVIRONMENT environment)
    if(NOT environment)
      set(environment "")
    endif()
    set_tests_properties(${t}.${coretype} PROPERTIES LABELS "kernels;${coretype}"
                         ENVIRONMENT "${environment};OPENBLAS_CORETYPE=${coretype}")
  endforeach()
endfunction()

function(jsmf_add_unit_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE jsmf_core GTest::gtest GTest::gtest_main jsmf_warnings)
  target_compile_options(${name} PRIVATE ${JSMF_TEST_COMPILE_OPTIONS})
  jsmf_add_test(${name} ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS unit
                       ENVIRONMENT "${JSMF_TEST_ENVIRONMENT}")
endfunction()

# jsmf_add_mpi_test(NAME SOURCES ... RANKS 1 2 3 4 [TIMEOUT s] [LOCAL_ONLY_AT_2 Suite.Test ...]):
# one test per rank count. LOCAL_ONLY_AT_2 names tests of a property local to each rank
# (threads within a rank), run at 1 and 2 ranks only: at 3 and 4 ranks oversubscribed on a
# small machine they test nothing more and cost the most.
function(jsmf_add_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;RANKS;LOCAL_ONLY_AT_2" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 180)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE jsmf_core jsmf_mpi_gtest_main jsmf_warnings)
  target_compile_options(${name} PRIVATE ${JSMF_TEST_COMPILE_OPTIONS})
  foreach(np IN LISTS ARG_RANKS)
    set(filter)
    if(ARG_LOCAL_ONLY_AT_2 AND np GREATER 2)
      list(JOIN ARG_LOCAL_ONLY_AT_2 ":" excluded)
      set(filter "--gtest_filter=-${excluded}")
    endif()
    jsmf_add_test(${name}.np${np}
      ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${JSMF_OVERSUBSCRIBE}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS} ${filter})
    set_tests_properties(${name}.np${np} PROPERTIES TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${np}
                         LABELS mpi ENVIRONMENT "${JSMF_TEST_ENVIRONMENT}")
  endforeach()
endfunction()
