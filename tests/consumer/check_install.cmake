# Installs the built ferrite into a scratch prefix, runs the installed `ferrite info` (when
# the program is built), then configures, builds and runs the consumer project against it,
# finding ferrite the way the README tells a user to (CMAKE_PREFIX_PATH).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${FERRITE_BUILD_DIR} --prefix ${WORK_DIR}/prefix
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "installing ferrite failed")
endif()
# The installed program must start from the prefix alone (its RUNPATH finds the installed
# library), with no help from the build tree or LD_LIBRARY_PATH.
if(CHECK_PROGRAM)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${WORK_DIR}/prefix/bin/ferrite info
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc OR NOT out MATCHES "^ferrite [0-9]")
    message(FATAL_ERROR "the installed bin/ferrite info failed (${rc}):\n${out}")
  endif()
  message("installed bin/ferrite info:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer ran but failed")
endif()
