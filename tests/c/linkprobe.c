/* Loads the audio link probe (tests/linkprobe) like a game loads libsdkpp.so and runs one frame
   through Opus and speexdsp: the statically linked C libraries work inside the shared library. */
#include <stdio.h>

int Sdkpp_LinkProbe(void);

int main(void) {
  int n = Sdkpp_LinkProbe();
  if (n <= 0) {
    fprintf(stderr, "linkprobe: Sdkpp_LinkProbe failed (%d)\n", n);
    return 1;
  }
  printf("linkprobe: one frame encoded to %d bytes through the static libraries\n", n);
  return 0;
}
