# The umbrella_complete test (CMakeLists.txt): include/brainlesslab/brainlesslab.h
# includes every other public header, so a header added to the folder cannot
# be forgotten there. Run as `cmake -DSOURCE_DIR=<project root> -P <this file>`.
file(GLOB headers RELATIVE ${SOURCE_DIR}/include ${SOURCE_DIR}/include/brainlesslab/*.h)
file(READ ${SOURCE_DIR}/include/brainlesslab/brainlesslab.h umbrella)
set(missing "")
foreach(h ${headers})
  if(NOT h STREQUAL "brainlesslab/brainlesslab.h")
    string(FIND "${umbrella}" "#include \"${h}\"" at)
    if(at EQUAL -1)
      list(APPEND missing ${h})
    endif()
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "include/brainlesslab/brainlesslab.h does not include: ${missing}")
endif()
