/* fuzz_sniff.c: libFuzzer target of format sniffing and of identity from
 * paths. The input's first line is the path, the rest the file's head:
 * iq_sniff picks a format, iq_path_ident reads the path. */
#include <string.h>

#include "../../analyzer/parse/parse.h"
#include "fuzz.h"

/* A slice that iq_path_ident made must lie inside the path it read. */
static void check_in(struct iq_str s, const char *path, size_t n)
{
	if (!s.n)
		return;
	FUZZ_CHECK(s.p >= path && s.p + s.n <= path + n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nl = memchr(p, '\n', size);
	size_t plen = nl ? (size_t)(nl - p) : size;
	size_t off = nl ? plen + 1 : size;
	char why[256], small[8];

	/* paths are C strings: cut at the first NUL, as open() would */
	char *path = iq_xstrndup(p, plen);
	size_t pn = strlen(path);

	/* the head ends where the fuzzer's buffer ends, so ASan sees a read
	 * past it */
	const struct iq_format *f = iq_sniff(path, p + off, size - off, why, sizeof why);
	FUZZ_CHECK(memchr(why, '\0', sizeof why) != NULL);
	if (f) {
		size_t i;
		for (i = 0; i < iq_format_count(); i++)
			if (iq_format_at(i) == f)
				break;
		FUZZ_CHECK(i < iq_format_count());
	}
	/* a reason buffer too small for any reason is cut, not overrun */
	const struct iq_format *g = iq_sniff(path, p + off, size - off, small, sizeof small);
	FUZZ_CHECK(memchr(small, '\0', sizeof small) != NULL);
	FUZZ_CHECK(g == f);

	struct iq_ident id;
	iq_path_ident(path, &id);
	check_in(id.node, path, pn);
	check_in(id.ns, path, pn);
	check_in(id.pod, path, pn);
	check_in(id.container, path, pn);
	check_in(id.pod_uid, path, pn);
	check_in(id.container_id, path, pn);
	FUZZ_CHECK(id.restart >= -1);
	free(path);
	return 0;
}
