# The install check, in two phases (cmake -P):
#
# PHASE=install (from ctest): installs the build tree into a scratch prefix outside the source
# and build trees, checks that no installed CMake or pkg-config file names either tree, copies
# the consumer sources beside the prefix, then runs PHASE=consume with the source and build
# trees out of reach (hidden under an empty tmpfs in a private mount namespace with
# `unshare -m` when that is allowed, i.e. as root; otherwise they stay visible and a note says
# so).
#
# PHASE=consume: builds and runs a consumer of every installed library (core, pq, redis), shared
# and static, through find_package(wirekit) and through pkg-config, and checks with nm that a
# consumer of the shared libraries defines no wk_ symbol itself (no second copy of the core)
# while a static one does and needs no libwirekit*.so. Then builds every program of examples/
# both ways, as strict C11 (-std=c11 -pedantic, warnings as errors), with only the installed
# package: they are run by ctest (example_*), here they must compile and link on their own.
#
# Variables: BUILD_DIR, SOURCE_DIR, CONSUMER_DIR, HAVE_PQ, HAVE_REDIS (phase install);
# WORK_DIR, HAVE_PQ, HAVE_REDIS (phase consume). WK_PG_DSN / WK_REDIS_URL in the environment
# make the pq / redis consumers talk to those servers.
if(NOT PHASE STREQUAL "consume")
  string(MD5 h "${BUILD_DIR}")
  string(SUBSTRING ${h} 0 10 h)
  set(tmp $ENV{TMPDIR})
  if(NOT tmp)
    set(tmp /tmp)
  endif()
  set(WORK_DIR ${tmp}/wirekit-install-${h})
  file(REMOVE_RECURSE ${WORK_DIR})
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(rc)
    message(FATAL_ERROR "cmake --install failed: ${rc}")
  endif()
  file(GLOB_RECURSE meta ${WORK_DIR}/prefix/*.cmake ${WORK_DIR}/prefix/*.pc)
  foreach(f ${meta})
    file(READ ${f} text)
    foreach(tree ${SOURCE_DIR} ${BUILD_DIR})
      string(FIND "${text}" "${tree}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${f} names ${tree}: the installed package depends on the build")
      endif()
    endforeach()
  endforeach()
  file(COPY ${CONSUMER_DIR}/ DESTINATION ${WORK_DIR}/src)
  # the example programs too, built as a user would build them from the installed package
  file(GLOB examples ${SOURCE_DIR}/examples/*.c)
  file(COPY ${examples} DESTINATION ${WORK_DIR}/src/examples)
  set(consume ${CMAKE_COMMAND} -DPHASE=consume -DWORK_DIR=${WORK_DIR} -DHAVE_PQ=${HAVE_PQ}
      -DHAVE_REDIS=${HAVE_REDIS} -P ${WORK_DIR}/src/run.cmake)
  execute_process(COMMAND unshare -m true RESULT_VARIABLE can_unshare OUTPUT_QUIET ERROR_QUIET)
  if(can_unshare EQUAL 0)
    # BUILD_DIR last: when it lies inside SOURCE_DIR it is hidden with it anyway.
    string(JOIN " " cmd ${consume})
    execute_process(COMMAND unshare -m sh -c
      "mount -t tmpfs wk-hidden '${SOURCE_DIR}' && { [ -d '${BUILD_DIR}' ] && mount -t tmpfs wk-hidden '${BUILD_DIR}' || true; } && exec ${cmd}"
      RESULT_VARIABLE rc)
  else()
    message(STATUS "note: unshare -m is not allowed here; the source tree stays visible")
    execute_process(COMMAND ${consume} RESULT_VARIABLE rc)
  endif()
  if(rc)
    message(FATAL_ERROR "install consumer failed: ${rc}")
  endif()
  return()
endif()

# ---- PHASE=consume ----
set(prefix ${WORK_DIR}/prefix)
if(EXISTS ${prefix}/lib64 AND NOT EXISTS ${prefix}/lib)
  set(libdir ${prefix}/lib64)
else()
  set(libdir ${prefix}/lib)
endif()
set(names core)
if(HAVE_PQ)
  list(APPEND names pq)
endif()
if(HAVE_REDIS)
  list(APPEND names redis)
endif()

# Runs one consumer and checks how the core got into it.
function(check_exe exe flavour)
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc OR NOT out MATCHES "ok")
    message(FATAL_ERROR "${exe} failed: ${rc} ${out} ${err}")
  endif()
  # external definitions only: static inline helpers from the headers are local (t) copies
  execute_process(COMMAND nm --defined-only --extern-only ${exe} OUTPUT_VARIABLE syms)
  string(REGEX MATCHALL "[^\n]* [A-Za-z] wk_[A-Za-z0-9_]*" own "${syms}")
  execute_process(COMMAND readelf -d ${exe} OUTPUT_VARIABLE dyn)
  if(flavour STREQUAL "shared")
    if(own)
      list(LENGTH own n)
      list(GET own 0 first)
      message(FATAL_ERROR "${exe} links the shared libraries yet defines ${n} wk_ symbols itself (${first} ...)")
    endif()
    if(NOT dyn MATCHES "libwirekit\\.so")
      message(FATAL_ERROR "${exe} does not load libwirekit.so")
    endif()
  else()
    if(NOT own)
      message(FATAL_ERROR "${exe} is static yet defines no wk_ symbol")
    endif()
    if(dyn MATCHES "libwirekit")
      message(FATAL_ERROR "${exe} is static yet loads a libwirekit shared library")
    endif()
  endif()
  message(STATUS "${exe}: ${out}")
endfunction()

# find_package route.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build
                -DCMAKE_PREFIX_PATH=${prefix} RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "consumer configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "consumer build failed: ${rc}\n${out}")
endif()
foreach(n ${names})
  set(suffix "")
  if(NOT n STREQUAL "core")
    set(suffix _${n})
  endif()
  check_exe(${WORK_DIR}/build/consumer${suffix} shared)
  check_exe(${WORK_DIR}/build/consumer${suffix}_static static)
endforeach()

# pkg-config route: shared, then static (the wirekit archives named instead of -l, so that the
# third-party libraries still link dynamically; wirekit-pq takes libpq's plain flags, because
# libpq's static dependencies are not installed with its -dev package).
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
foreach(n ${names})
  if(n STREQUAL "core")
    set(pc wirekit)
    set(src consumer.c)
  else()
    set(pc wirekit-${n})
    set(src consumer_${n}.c)
  endif()
  foreach(flavour shared static)
    if(flavour STREQUAL "shared")
      set(q --libs ${pc})
    elseif(n STREQUAL "pq")
      set(q --libs ${pc})
    else()
      set(q --static --libs ${pc})
    endif()
    execute_process(COMMAND pkg-config --cflags ${q} OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                    ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc)
      message(FATAL_ERROR "pkg-config ${q} failed: ${err}")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    if(flavour STREQUAL "static")
      if(n STREQUAL "pq")
        # libwirekit.a's own private libraries (libm)
        execute_process(COMMAND pkg-config --static --libs-only-l wirekit
                        OUTPUT_VARIABLE more OUTPUT_STRIP_TRAILING_WHITESPACE)
        separate_arguments(more UNIX_COMMAND "${more}")
        list(APPEND flags ${more})
      endif()
      list(TRANSFORM flags REPLACE "^-l(wirekit(-pq|-redis)?)$" "${libdir}/lib\\1.a")
    endif()
    set(exe ${WORK_DIR}/pc_${n}_${flavour})
    execute_process(COMMAND cc -std=c11 ${WORK_DIR}/src/${src} -o ${exe} ${flags}
                    -Wl,-rpath,${libdir} RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(rc)
      message(FATAL_ERROR "pkg-config consumer ${n} (${flavour}) build failed: ${flags}\n${err}")
    endif()
    check_exe(${exe} ${flavour})
  endforeach()
endforeach()
# The examples through pkg-config (the find_package build above built them too).
file(GLOB examples ${WORK_DIR}/src/examples/*.c)
set(nexamples 0)
foreach(e ${examples})
  get_filename_component(n ${e} NAME_WE)
  if(n MATCHES "^pq_")
    set(pc wirekit-pq)
    set(have ${HAVE_PQ})
  elseif(n MATCHES "^cache_")
    set(pc wirekit-redis)
    set(have ${HAVE_REDIS})
  elseif(n STREQUAL "gateway")
    set(pc wirekit-pq wirekit-redis)
    set(have OFF)
    if(HAVE_PQ AND HAVE_REDIS)
      set(have ON)
    endif()
  else()
    set(pc wirekit)
    set(have ON)
  endif()
  if(NOT have)
    continue()
  endif()
  execute_process(COMMAND pkg-config --cflags --libs ${pc} OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  execute_process(COMMAND cc -std=c11 -pedantic -Wall -Wextra -Werror ${e}
                  -o ${WORK_DIR}/pc_example_${n} ${flags} -Wl,-rpath,${libdir}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "example ${n} does not build against the installed ${pc} with "
                        "pkg-config:\n${err}")
  endif()
  math(EXPR nexamples "${nexamples} + 1")
endforeach()
if(nexamples LESS 4)
  message(FATAL_ERROR "only ${nexamples} examples found in ${WORK_DIR}/src/examples")
endif()
message(STATUS "install consumer: ${nexamples} examples built with find_package and pkg-config")
list(LENGTH names k)
math(EXPR k "${k} * 4")
message(STATUS "install consumer: ${k} programs (${names}; shared and static; CMake and pkg-config) ok")
