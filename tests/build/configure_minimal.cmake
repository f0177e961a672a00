# The build with no optional dependency at all (cmake -P): configures the project as a machine
# with only a C compiler and libc would see it (no C++ compiler: CXX points nowhere; libpq and
# pkg-config hidden with CMAKE_DISABLE_FIND_PACKAGE_*), checks the configure summary (core and
# CLI built; wirekit-pq, wirekit-redis, the C++ parts and wirekit-bench skipped, each with its
# reason), builds the core libraries and the CLI, checks they need nothing beyond libc/libm and
# that the CLI works, and checks that asking for a missing part (WK_WITH_PQ=ON) fails the
# configure with a message naming it.
# Variables: SOURCE_DIR, WORK_DIR, GENERATOR.
file(REMOVE_RECURSE ${WORK_DIR})
set(hide -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON)
execute_process(COMMAND ${CMAKE_COMMAND} -E env CXX=/nonexistent/wk-no-c++
                ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/b -G ${GENERATOR} ${hide}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "minimal configure failed (${rc}):\n${out}\n${err}")
endif()
foreach(want
    "wirekit \\(shared \\+ static\\) +built"
    "wirekit-pq +skipped +\\(libpq not found"
    "wirekit-redis +skipped +\\(pkg-config not found\\)"
    "wirekit command +built"
    "C\\+\\+ parts +skipped +\\(no C\\+\\+ compiler found\\)"
    "wirekit-bench +skipped +\\(missing: C\\+\\+ compiler, pkg-config")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "configure summary lacks /${want}/:\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/b
                --target wirekit_shared wirekit_static wirekit_cli
                RESULT_VARIABLE rc OUTPUT_VARIABLE bout ERROR_VARIABLE bout)
if(rc)
  message(FATAL_ERROR "minimal build failed (${rc}):\n${bout}")
endif()
foreach(f ${WORK_DIR}/b/libwirekit.so ${WORK_DIR}/b/bin/wirekit)
  execute_process(COMMAND readelf -d ${f} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
  string(REGEX MATCHALL "Shared library: \\[[^]]*\\]" needed "${dyn}")
  foreach(n ${needed})
    if(NOT n MATCHES "\\[(libc|libm|ld-linux[^]]*)\\.so")
      message(FATAL_ERROR "${f} needs ${n} in the minimal build")
    endif()
  endforeach()
endforeach()
execute_process(COMMAND ${WORK_DIR}/b/bin/wirekit mime "Text/HTML; Charset=\"utf-8\""
                RESULT_VARIABLE rc OUTPUT_VARIABLE mout)
if(rc OR NOT mout STREQUAL "text/html;charset=utf-8\n")
  message(FATAL_ERROR "the minimal CLI failed: ${rc} '${mout}'")
endif()
# ON means required: a missing libpq is then a configure error that names it.
execute_process(COMMAND ${CMAKE_COMMAND} -E env CXX=/nonexistent/wk-no-c++
                ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/on -G ${GENERATOR} ${hide}
                -DWK_WITH_PQ=ON RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc OR NOT err MATCHES "WK_WITH_PQ=ON but libpq not found")
  message(FATAL_ERROR "WK_WITH_PQ=ON without libpq: exit ${rc}, stderr:\n${err}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "minimal configure: summary, build, libc-only dependencies, CLI and ON-is-required ok")
