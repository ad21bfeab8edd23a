# The install_link test (CMakeLists.txt): what `cmake --install` puts under a
# prefix is enough to build a program on the engine with nothing but
# pkg-config, as the README tells C users: tests/test_umbrella.c is compiled
# against the installed header and library alone, then run. Run as
# `cmake -DBUILD_DIR=<build> -DSOURCE_DIR=<root> -DCC=<compiler> -P <this file>`.
set(prefix ${BUILD_DIR}/install-link-test)
file(REMOVE_RECURSE ${prefix})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
file(GLOB pcdir ${prefix}/lib*/pkgconfig ${prefix}/lib/*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
execute_process(COMMAND pkg-config --cflags --libs brainlesslab
                OUTPUT_VARIABLE flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find the installed brainlesslab.pc under ${pcdir}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND ${CC} -std=c17 ${SOURCE_DIR}/tests/test_umbrella.c -o ${prefix}/umbrella
                        ${flags}
                RESULT_VARIABLE rc ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a program cannot be built from the installed files with "
                      "`pkg-config --cflags --libs brainlesslab` (${flags}):\n${out}")
endif()
execute_process(COMMAND ${prefix}/umbrella RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the program built on the installed library failed its check ${rc}")
endif()
file(REMOVE_RECURSE ${prefix})
