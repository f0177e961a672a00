# Runs `wirekit inspect` on committed MessagePack files and checks what it prints.
execute_process(COMMAND ${WIREKIT} inspect ${DATA}/seed_and_timestamp.msgpack
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "inspect of a valid file exited ${rc}: ${err}")
endif()
foreach(want
    "0          85   fixmap           { map of 5 pairs"
    "1          a8   fixstr             key \"username\""
    "35         14   positive fixint    value 20"
    "54         82   fixmap             value { map of 2 pairs"
    "71         0a   positive fixint      value 10"
    "72         d6   fixext 4         timestamp 1514862245.000000000s (2018-01-02T03:04:05.000000000Z)"
    "2 top-level values, 78 bytes")
  string(FIND "${out}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "inspect output lacks '${want}':\n${out}")
  endif()
endforeach()

execute_process(COMMAND ${WIREKIT} inspect ${DATA}/bad_c1.msgpack
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "inspect of a bad file exited ${rc}, want 1")
endif()
if(NOT err STREQUAL "wirekit: ${DATA}/bad_c1.msgpack: invalid MessagePack: byte 0xc1 is never used in MessagePack (at byte 2)\n")
  message(FATAL_ERROR "unexpected stderr: '${err}'")
endif()

# Without a file it reads standard input.
execute_process(COMMAND ${WIREKIT} inspect INPUT_FILE ${DATA}/seed_and_timestamp.msgpack
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "2 top-level values, 78 bytes")
  message(FATAL_ERROR "inspect of standard input exited ${rc}: ${out}${err}")
endif()
execute_process(COMMAND ${WIREKIT} inspect --max-depth=0 RESULT_VARIABLE rc OUTPUT_QUIET
  ERROR_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "inspect with a bad option exited ${rc}, want 2")
endif()
message(STATUS "cli_inspect: 3 checks passed")

# One element, one pair: the count's noun is singular (one_of_each.msgpack: [[1], {"a": 1}]).
execute_process(COMMAND ${WIREKIT} inspect RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err INPUT_FILE ${DATA}/one_of_each.msgpack)
if(NOT rc EQUAL 0 OR NOT out MATCHES "array of 1 element\n" OR NOT out MATCHES "map of 1 pair\n")
  message(FATAL_ERROR "inspect of one element and one pair: ${out}${err}")
endif()
