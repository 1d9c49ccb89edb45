// SPDX-License-Identifier: GPL-2.0
/*
 * A man page's EXAMPLES program, checked against its page: runs EXAMPLE
 * (the program, as tools/initramfs.sh built it from the page) and passes
 * if it exits 0 having printed exactly the output that the page's shell
 * session shows, man_expected[] (made from the page by man_example_output
 * of tools/lib.sh). So a page shows what its program does on this kernel,
 * and a change to the kernel, the library or the page that parts them
 * fails here.
 *
 * Built once per page: cc -DEXAMPLE='"/bin/man-NAME.prog"' -include
 * EXPECTED.h, where EXPECTED.h defines man_expected[].
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	static char out[1 << 16];
	size_t len = 0;
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd)) {
		perror("pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execl(EXAMPLE, EXAMPLE, (char *)NULL);
		perror(EXAMPLE);
		_exit(127);
	}
	close(pfd[1]);
	while (len < sizeof(out) - 1 &&
	       (n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	fputs(out, stdout);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("%s: exit status %d, not 0\n", EXAMPLE,
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 1;
	}
	if (strcmp(out, man_expected)) {
		printf("%s: its output is not its page's, which is:\n%s",
		       EXAMPLE, man_expected);
		return 1;
	}
	printf("%s: output as its page shows\n", EXAMPLE);
	return 0;
}
