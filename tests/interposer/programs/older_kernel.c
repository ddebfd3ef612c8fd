/* older_kernel FEATURE PROGRAM [ARG...]: runs PROGRAM as on a kernel (or a
 * filesystem) without FEATURE, through a seccomp filter kept across the exec
 * (no_new_privs: no privilege needed):
 *   rename-flags   renameat2 with RENAME_NOREPLACE or RENAME_EXCHANGE fails
 *                  with EINVAL, a plain rename works (some network and FUSE
 *                  filesystems, kernels before 3.15)
 *   wipe-on-fork   madvise(MADV_WIPEONFORK) fails with EINVAL, as an
 *                  unknown advice does (kernels before 4.14)
 *   no-execveat    execveat fails with ENOSYS (kernels before 3.19)
 *   no-subreaper   prctl(PR_SET_CHILD_SUBREAPER) fails with EINVAL (kernels
 *                  before 3.4, and qemu-user)
 * Exits 3 when no filter can be installed, 2 on a bad FEATURE. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "older_kernel: no seccomp architecture for this target"
#endif

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14's value, for older headers */
#endif

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: older_kernel rename-flags|wipe-on-fork|no-execveat|no-subreaper PROGRAM [ARG...]\n");
    return 2;
  }
  /* The refused call: its number, the argument that tells it, and the value
   * of that argument that passes (rename-flags: a renameat2 without flags)
   * or is refused (wipe-on-fork: that advice alone). */
  unsigned int call, argument, value, error = EINVAL;
  int refuse_the_value;
  if (strcmp(argv[1], "rename-flags") == 0) {
    call = __NR_renameat2, argument = 4, value = 0, refuse_the_value = 0;
  } else if (strcmp(argv[1], "wipe-on-fork") == 0) {
    call = __NR_madvise, argument = 2, value = MADV_WIPEONFORK, refuse_the_value = 1;
  } else if (strcmp(argv[1], "no-execveat") == 0) {
    /* Every call refused: the flags that would pass are none a caller
     * gives (all 32 bits set). */
    call = __NR_execveat, argument = 4, value = 0xffffffffu, refuse_the_value = 0, error = ENOSYS;
  } else if (strcmp(argv[1], "no-subreaper") == 0) {
    call = __NR_prctl, argument = 0, value = PR_SET_CHILD_SUBREAPER, refuse_the_value = 1;
  } else {
    fprintf(stderr, "older_kernel: unknown feature %s\n", argv[1]);
    return 2;
  }
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_AUDIT_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, call, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* The argument's low 32 bits (the flags, the advice). */
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[argument])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, refuse_the_value ? 1 : 0, refuse_the_value ? 0 : 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (error & SECCOMP_RET_DATA)),
  };
  struct sock_fprog program = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    perror("older_kernel: seccomp");
    return 3;
  }
  execvp(argv[2], argv + 2);
  perror("older_kernel: exec");
  return 127;
}
