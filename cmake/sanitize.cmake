# The sanitizer build (HEAPLINE_SANITIZE=ON, made by tools/test.sh
# --sanitize in build/sanitize): ASan and UBSan in every program and library
# of heapline that runs on its own (the launcher, the harness, the tests,
# the fuzz targets' corpus replays, and the accounting the interposer's unit
# tests link), every report an error that fails the test.
#
# ASan cannot sit beside an interposed malloc: its runtime must be the first
# library of the process and owns malloc itself. So libheapline.so, the
# other preload libraries and the programs the tests run under them get
# UBSan alone, in trap mode: no runtime to load (libheapline.so still needs
# only libc), undefined behaviour stops the program at the faulting
# instruction. heapline_preloaded_targets names them, and every target built
# from tests/interposer/programs/ is one of them whether named or not (a
# program added there and forgotten here would otherwise get ASan, which
# refuses to start after libheapline.so).
set(heapline_preloaded_targets
  # interposer/: the preload libraries and the accounting linked into them
  heapline_null heapline_preload heapline_preload_test_hooks
  heapline_accounting_preloaded heapline_accounting_test_hooks
  heapline_preload_accuracy heapline_accounting_exact_shadow
  heapline_preload_drops_publishes heapline_accounting_drops_publishes
  # scenarios/ and tests/: the programs run under the library (the static
  # programs cannot link ASan at all)
  malloc_churn
  alloc_patterns api_corners fork_probe mapped_patterns phase_probe phase_probe_nopie
  own_malloc signal_probe marker_race oracle_workload profile_sites profile_sites_lines realloc_guard heapline_slow_shim
  static_program static_exit)
# The same, for targets that only some machines build (alloc_patterns_jemalloc
# needs jemalloc).
set(heapline_optional_preloaded_targets alloc_patterns_jemalloc)

set(heapline_asan_flags -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
set(heapline_trap_flags -fsanitize=undefined -fsanitize-undefined-trap-on-error)

function(heapline_targets_in dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    heapline_targets_in(${subdir} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(heapline_apply_sanitizers)
  heapline_targets_in(${PROJECT_SOURCE_DIR} targets)
  foreach(name IN LISTS heapline_preloaded_targets)
    if(NOT name IN_LIST targets)
      message(FATAL_ERROR "cmake/sanitize.cmake names a target that does not exist: ${name}")
    endif()
  endforeach()
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|STATIC_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    # A program of tests/interposer/programs/ is run under a preload library
    # by its nature: so marked whether the list above names it or not.
    get_target_property(sources ${target} SOURCES)
    set(test_program FALSE)
    foreach(source IN LISTS sources)
      if(source MATCHES "^programs/")
        set(test_program TRUE)
      endif()
    endforeach()
    get_target_property(source_dir ${target} SOURCE_DIR)
    if(NOT source_dir STREQUAL "${PROJECT_SOURCE_DIR}/tests/interposer")
      set(test_program FALSE)
    endif()
    if(test_program OR target IN_LIST heapline_preloaded_targets OR target IN_LIST heapline_optional_preloaded_targets)
      # Compile options only: linking -fsanitize=undefined would pull in
      # libubsan, which trap mode does not call.
      target_compile_options(${target} PRIVATE ${heapline_trap_flags})
    else()
      target_compile_options(${target} PRIVATE ${heapline_asan_flags})
      target_link_options(${target} PRIVATE ${heapline_asan_flags})
    endif()
  endforeach()
endfunction()
