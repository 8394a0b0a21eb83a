/* pause: PID 1 of a minik8s pod's namespaces; holds them open, reaps zombies, exits 0 on SIGTERM/SIGINT. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_terminate(int sig) {
  (void)sig;
  /* _exit: nothing to flush, and exit() is not async-signal-safe. */
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  /* As PID 1 of the pod's PID namespace we inherit every orphan; reap them all so none stays a zombie. */
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
    static const char version[] = "minik8s pause 1.0\n";
    /* write(2), not stdio: keeps the static binary small. */
    if (write(STDOUT_FILENO, version, sizeof version - 1) < 0) return 1;
    return 0;
  }
  if (getpid() != 1) {
    static const char warning[] = "pause: warning: not running as PID 1\n";
    if (write(STDERR_FILENO, warning, sizeof warning - 1) < 0) { /* nowhere to report it */ }
  }

  struct sigaction term;
  memset(&term, 0, sizeof term);
  term.sa_handler = on_terminate;
  sigemptyset(&term.sa_mask);
  if (sigaction(SIGTERM, &term, NULL) < 0 || sigaction(SIGINT, &term, NULL) < 0) return 1;

  struct sigaction chld;
  memset(&chld, 0, sizeof chld);
  chld.sa_handler = on_child;
  sigemptyset(&chld.sa_mask);
  /* SA_NOCLDSTOP: stopped children are not zombies; SA_RESTART keeps pause() semantics simple. */
  chld.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  if (sigaction(SIGCHLD, &chld, NULL) < 0) return 1;

  for (;;) pause();
  return 42; /* not reached */
}
