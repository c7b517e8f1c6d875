# BPF build support: vmlinux.h from the build machine's kernel BTF (with the checked-in
# fallback when the build machine has none), .bpf.o with clang -target bpf, and the
# libbpf skeleton header with bpftool — all into the build tree, never committed.
# The build fails loudly when the BPF toolchain is missing.

find_program(DRIP_CLANG NAMES clang clang-14 clang-15 clang-16)
find_program(DRIP_BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin)
if(NOT DRIP_CLANG OR NOT DRIP_BPFTOOL)
  message(FATAL_ERROR
    "Drip's BPF programs need clang and bpftool (found clang='${DRIP_CLANG}', "
    "bpftool='${DRIP_BPFTOOL}'); run scripts/install-deps.sh")
endif()
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(DRIP_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(DRIP_BPF_ARCH arm64)
else()
  message(FATAL_ERROR "Drip's BPF programs support x86_64 and arm64, not ${CMAKE_SYSTEM_PROCESSOR}")
endif()

# usdt.bpf.h includes <linux/errno.h>, whose <asm/...> lives in the multiarch directory
# that clang -target bpf does not search by itself.
set(DRIP_BPF_SYS_INCLUDES -idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})

set(DRIP_BPF_GEN_DIR ${CMAKE_BINARY_DIR}/gen/bpf)
file(MAKE_DIRECTORY ${DRIP_BPF_GEN_DIR})
set(DRIP_VMLINUX_H ${DRIP_BPF_GEN_DIR}/vmlinux.h)
set(DRIP_VMLINUX_FALLBACK ${PROJECT_SOURCE_DIR}/agent/bpf/vmlinux_fallback.h)

# drip_bpf_vmlinux(): the rule that makes vmlinux.h. Called from the directory whose
# drip_bpf_skeleton() calls consume it: a custom command's output is only known, as a
# file to depend on, in the directory that defines it (Ninja forgives the difference,
# Unix Makefiles stop with "No rule to make target").
function(drip_bpf_vmlinux)
  add_custom_command(
    OUTPUT ${DRIP_VMLINUX_H}
    COMMAND sh -c "if [ -r /sys/kernel/btf/vmlinux ]; then ${DRIP_BPFTOOL} btf dump file /sys/kernel/btf/vmlinux format c > ${DRIP_VMLINUX_H}.tmp && mv ${DRIP_VMLINUX_H}.tmp ${DRIP_VMLINUX_H}; else cp ${DRIP_VMLINUX_FALLBACK} ${DRIP_VMLINUX_H}; fi"
    COMMENT "Generating vmlinux.h from kernel BTF"
    VERBATIM)
  # One target owns the file and the skeletons wait for it: with Unix Makefiles, every
  # target that lists a custom command's output would otherwise run the rule itself, and
  # two of them at once race on vmlinux.h.tmp.
  add_custom_target(drip_bpf_vmlinux DEPENDS ${DRIP_VMLINUX_H})
endfunction()

# drip_bpf_skeleton(NAME): agent/bpf/NAME.bpf.c -> NAME.bpf.o -> NAME.skel.h in the build
# tree; defines target drip_bpf_skel_NAME to depend on. The program is also compiled
# against the checked-in fallback vmlinux.h (NAME.fallback.bpf.o, built with ALL), so a
# build on a machine with BTF still proves the fallback compiles; a test loads it.
function(drip_bpf_skeleton name)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/${name}.bpf.c)
  set(obj ${DRIP_BPF_GEN_DIR}/${name}.bpf.o)
  set(skel ${DRIP_BPF_GEN_DIR}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${DRIP_CLANG} -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_${DRIP_BPF_ARCH} ${DRIP_BPF_SYS_INCLUDES}
            -I${DRIP_BPF_GEN_DIR} -I${CMAKE_CURRENT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}
            -c ${src} -o ${obj}
    DEPENDS ${src} ${DRIP_VMLINUX_H} ${ARGN}
    COMMENT "Compiling BPF program ${name}.bpf.c"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND sh -c "${DRIP_BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp && mv ${skel}.tmp ${skel}"
    DEPENDS ${obj}
    COMMENT "Generating BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(drip_bpf_skel_${name} DEPENDS ${skel})
  add_dependencies(drip_bpf_skel_${name} drip_bpf_vmlinux)

  set(fallback_dir ${DRIP_BPF_GEN_DIR}/fallback)
  set(fallback_obj ${DRIP_BPF_GEN_DIR}/${name}.fallback.bpf.o)
  add_custom_command(
    OUTPUT ${fallback_obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${fallback_dir}
    COMMAND ${CMAKE_COMMAND} -E copy ${DRIP_VMLINUX_FALLBACK} ${fallback_dir}/vmlinux.h
    COMMAND ${DRIP_CLANG} -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_${DRIP_BPF_ARCH} ${DRIP_BPF_SYS_INCLUDES}
            -I${fallback_dir} -I${CMAKE_CURRENT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}
            -c ${src} -o ${fallback_obj}
    DEPENDS ${src} ${DRIP_VMLINUX_FALLBACK} ${ARGN}
    COMMENT "Compiling BPF program ${name}.bpf.c against the fallback vmlinux.h"
    VERBATIM)
  add_custom_target(drip_bpf_fallback_${name} ALL DEPENDS ${fallback_obj})
endfunction()
