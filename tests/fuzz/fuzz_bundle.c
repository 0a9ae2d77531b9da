/* fuzz_bundle.c: libFuzzer target of the bundle walker: the input is
 * written to a file under /dev/shm and walked as a bundle with small limits
 * (1 MiB a member, 4 MiB in all, 4 nested archives); every member is read
 * to its end. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/bundle/bundle.h"
#include "fuzz.h"

#define MEMBER_MAX ((int64_t)1 << 20)
#define TOTAL_MAX ((int64_t)4 << 20)
#define DEPTH_MAX 4

struct walked {
	int64_t total;   /* bytes read from all members */
	long members;
	long problems;
};

static void on_problem(const char *path, const char *msg, void *u)
{
	struct walked *w = u;
	FUZZ_CHECK(path != NULL && msg != NULL);
	w->problems++;
	uint64_t h = 0;
	fuzz_hash(&h, path, strlen(path));
	fuzz_hash(&h, msg, strlen(msg));
}

static int on_member(struct iq_member *m, void *u)
{
	struct walked *w = u;
	static unsigned char buf[65536];
	struct iq_diag d;
	int64_t got = 0;
	unsigned step = 0;

	FUZZ_CHECK(m->path != NULL);
	FUZZ_CHECK(m->depth >= 0 && m->depth <= DEPTH_MAX);
	FUZZ_CHECK(m->size >= -1);
	uint64_t h = 0;
	fuzz_hash(&h, m->path, strlen(m->path));
	w->members++;
	for (;;) {
		/* odd read sizes, then a big one: member reads are streams */
		size_t want = step < 8 ? 1 + step * 7 : sizeof buf;
		step++;
		d.msg[0] = '\0';
		ssize_t n = iq_member_read(m, buf, want, &d);
		if (n < 0) {
			FUZZ_CHECK(memchr(d.msg, '\0', sizeof d.msg) != NULL);
			FUZZ_CHECK(d.msg[0] != '\0');
			break;
		}
		FUZZ_CHECK((size_t)n <= want);
		if (n == 0)
			break;
		fuzz_hash(&h, buf, (size_t)n);
		got += n;
		FUZZ_CHECK(got <= MEMBER_MAX);
		w->total += n;
	}
	/* at the end it stays at the end */
	FUZZ_CHECK(iq_member_read(m, buf, sizeof buf, &d) <= 0);
	FUZZ_CHECK(w->total <= TOTAL_MAX);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct walked w = {0, 0, 0};
	struct iq_walk_opts o = {
		.max_depth = DEPTH_MAX,
		.max_member_bytes = MEMBER_MAX,
		.max_total_bytes = TOTAL_MAX,
		.problem = on_problem,
		.u = &w,
	};
	struct iq_diag d;

	if (!path[0])
		snprintf(path, sizeof path, "/dev/shm/iq-fuzz-bundle-%ld", (long)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		FUZZ_CHECK(n > 0);
		off += (size_t)n;
	}
	close(fd);

	d.msg[0] = '\0';
	int rc = iq_bundle_walk(path, &o, on_member, &d);
	/* a regular file is always walkable; what is wrong inside it is a
	 * problem, not an error */
	FUZZ_CHECK(rc == 0);
	unlink(path);
	return 0;
}
