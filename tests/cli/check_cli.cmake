# Runs the `ferrite` program with good and bad command lines and checks the exit status and
# the output of each (cmake -DFERRITE=<program> -DWORK_DIR=<scratch> -P check_cli.cmake).
# Exit status: 0 success and help, 1 the command failed, 2 a usage error.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(failures 0)

# expect(<exit status> <regex the output must match> [NOT <regex it must not match>] ARGS <args...>)
function(expect status regex)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "NOT" "ARGS")
  execute_process(COMMAND ${FERRITE} ${arg_ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(problem "")
  if(NOT rc STREQUAL "${status}")
    set(problem "exit status ${rc}, expected ${status}")
  elseif(NOT out MATCHES "${regex}")
    set(problem "output does not match '${regex}'")
  elseif(arg_NOT AND out MATCHES "${arg_NOT}")
    set(problem "output matches '${arg_NOT}'")
  endif()
  string(REPLACE ";" " " shown "${arg_ARGS}")
  if(problem)
    message("FAIL: ferrite ${shown}: ${problem}\n${out}")
    math(EXPR n "${failures} + 1")
    set(failures ${n} PARENT_SCOPE)
  else()
    message("ok:   ferrite ${shown} -> ${rc}")
  endif()
endfunction()

# Help is a success, short or long, for the program and for each command.
expect(0 "Usage: ferrite" ARGS -h)
expect(0 "Usage: ferrite" ARGS --help)
expect(0 "Usage: ferrite bench.*--filter" ARGS bench --help)
expect(0 "Usage: ferrite bench" ARGS bench -h)
expect(0 "Usage: ferrite info" ARGS info --help)
expect(0 "ferrite [0-9]+\\.[0-9]+\\.[0-9]+.*backends: cpu" ARGS info)

# Usage errors: exit 2 with a message, never an uncaught exception.
expect(2 "subcommand is required" ARGS)
expect(2 "not expected: --bogus" ARGS info --bogus)
expect(2 "not expected: extra" ARGS info extra)
expect(2 "not expected: --bogus" ARGS bench --bogus)
foreach(device cuda:abc cuda:99999999999 cuda:-1 cuda: gpu cpu:1 cuda0 " cuda:0")
  expect(2 "'${device}' is not a device" ARGS bench --device ${device})
endforeach()
expect(2 "--device" ARGS bench --device)
expect(2 "(--list excludes --json|--json excludes --list)" ARGS bench --device cpu --list --json ${WORK_DIR}/list.json)

# Well-formed but unusable: exit 1 naming the problem.
expect(1 "cuda:2147483647" ARGS bench --device cuda:2147483647)
expect(1 "cannot write the --json file '/nonexistent/dir/x.json'" ARGS bench --device cpu --json /nonexistent/dir/x.json)
expect(1 "--filter 'no_such_case' matched no case" ARGS bench --device cpu --list --filter sum_f32,no_such_case)

# train and generate (examples/gpt/; tests of training itself are examples/gpt/test_train.sh).
expect(0 "Usage: ferrite train.*--preset.*--resume" ARGS train --help)
expect(0 "Usage: ferrite generate.*--prompt" ARGS generate --help)
expect(2 "'gpu' is not a device" ARGS train --device gpu)
expect(2 "--checkpoint is required" ARGS generate)
expect(1 "unknown preset 'huge'" ARGS train --preset huge --device cpu)
expect(1 "device cuda:9 does not exist" ARGS train --device cuda:9)
expect(1 "/nonexistent/data does not exist" ARGS train --device cpu --data /nonexistent/data)

# --filter: exact names (sum_f32 is not cumsum_f32) and globs.
expect(0 "\nsum_f32 +\\[" NOT "cumsum|sum_bf16|sum_rows" ARGS bench --device cpu --list --filter sum_f32)
expect(0 "\nsoftmax_f32 .*\nsoftmax_bf16 " NOT "log_softmax" ARGS bench --device cpu --list --filter softmax_f32,softmax_bf16)
expect(0 "\nlog_softmax_f32_4096x128 +\\[4096, 128\\]" NOT "1048576" ARGS bench --device cpu --list --filter *softmax_f32_*)

# The CPU table: products in GFLOP/s (not 0.0 TFLOP/s), no GPU bandwidth column, and the
# --json file holds exactly the cases that ran.
set(json ${WORK_DIR}/bench.json)
# (The cases run in family order: bench/cases_matmul.cpp before bench/cases_reduction.cpp.)
expect(0 "reduced sizes.*\nmatmul_f32 +256\\^3 +[0-9.]+ +([1-9][0-9]*\\.[0-9]|0\\.[1-9]) GFLOP/s\nsum_f32 +\\[[0-9]+\\] +[0-9.]+ +[0-9.]+ GB/s\n"
       NOT "HBM|TFLOP"
       ARGS bench --device cpu --quick --filter sum_f32,matmul_f32 --json ${json})
file(READ ${json} json_text)
string(REGEX MATCHALL "\"name\"" names "${json_text}")
list(LENGTH names count)
if(NOT count EQUAL 2 OR NOT json_text MATCHES "\"name\": \"sum_f32\"")
  message("FAIL: ${json} should hold sum_f32 and matmul_f32:\n${json_text}")
  math(EXPR failures "${failures} + 1")
endif()

if(failures)
  message(FATAL_ERROR "${failures} command line check(s) failed")
endif()
