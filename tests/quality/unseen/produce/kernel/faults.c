/* The guest's faulting programs for produce/kernel.sh: each argument names one fault the
   kernel reports (a NULL write, a write to read-only memory, a division by zero, an invalid
   opcode, a privileged instruction, a stack overflow, memory until the OOM killer). */
#include <stdlib.h>
#include <string.h>

static int depth(int n) {
  volatile char pad[4096];
  pad[0] = (char)n;
  return depth(n + 1) + pad[0];
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "null";
  volatile int zero = 0;
  if (!strcmp(what, "null")) *(volatile int *)0 = 1;
  if (!strcmp(what, "rodata")) *(volatile char *)"constant" = 'x';
  if (!strcmp(what, "divide")) return 10 / zero;
  if (!strcmp(what, "opcode")) __builtin_trap();
  if (!strcmp(what, "privileged")) __asm__ volatile("hlt");
  if (!strcmp(what, "stack")) return depth(0);
  if (!strcmp(what, "memory"))
    for (;;) {
      char *p = malloc(1 << 20);
      if (p) memset(p, 1, 1 << 20);
    }
  return 0;
}
