# The memory allocator drift's executables are linked with (docs/performance.md#the-allocator).
# LibTorch frees each batch's activations and gradients and asks for the same sizes again at
# the next batch. glibc's malloc hands large blocks back to the kernel when they are freed
# (mmap'd chunks, heap trimming), so every batch faulted its buffers in again: the kernel took
# 8 % of the CPU time on one machine and rivalled the training on another, varying 2-3x from run
# to run (docs/performance.md#the-allocator has the figures). tcmalloc keeps freed memory
# in its own caches and gives it back only slowly, so a round reuses the last round's pages.
#
#   DRIFT_ALLOCATOR=tcmalloc  (default) Debian's libtcmalloc_minimal (libgoogle-perftools-dev)
#   DRIFT_ALLOCATOR=system    glibc's malloc
# The sanitizer and fuzz builds keep the system allocator: ASan replaces malloc itself.
set(DRIFT_ALLOCATOR "tcmalloc" CACHE STRING "allocator linked into drift's executables: tcmalloc or system")
set_property(CACHE DRIFT_ALLOCATOR PROPERTY STRINGS tcmalloc system)
if(NOT DRIFT_ALLOCATOR MATCHES "^(tcmalloc|system)$")
  message(FATAL_ERROR "DRIFT_ALLOCATOR=${DRIFT_ALLOCATOR}: choose tcmalloc or system")
endif()
set(drift_allocator_in_use "${DRIFT_ALLOCATOR}")
if(DRIFT_SANITIZE OR DRIFT_FUZZ)
  set(drift_allocator_in_use "system")
endif()

if(drift_allocator_in_use STREQUAL "tcmalloc")
  find_library(DRIFT_TCMALLOC_LIBRARY NAMES tcmalloc_minimal libtcmalloc_minimal.so.4)
  if(NOT DRIFT_TCMALLOC_LIBRARY)
    message(FATAL_ERROR "tcmalloc not found: install libgoogle-perftools-dev (tools/install-deps.sh does), "
                        "or configure with -DDRIFT_ALLOCATOR=system")
  endif()
  message(STATUS "drift: executables use tcmalloc (${DRIFT_TCMALLOC_LIBRARY})")
else()
  message(STATUS "drift: executables use the system allocator")
endif()

# Links `target` (an executable) with the allocator in use. --no-as-needed: the executable
# calls no tcmalloc symbol by name, so the linker would otherwise drop it; linked, its malloc
# and free come before glibc's for every library the process loads, LibTorch's and CAF's too.
function(drift_link_allocator target)
  if(drift_allocator_in_use STREQUAL "tcmalloc")
    target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed" ${DRIFT_TCMALLOC_LIBRARY}
                          "-Wl,--pop-state")
  endif()
endfunction()
