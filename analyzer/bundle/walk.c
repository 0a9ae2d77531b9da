/* walk.c: placeholder until the bundle walker lands. */
#include "bundle.h"
ssize_t iq_member_read(struct iq_member *m, void *buf, size_t n, struct iq_diag *d)
{ (void)m; (void)buf; (void)n; (void)d; return 0; }
int iq_bundle_walk(const char *path, const struct iq_walk_opts *opts, iq_member_fn fn, struct iq_diag *d)
{ (void)opts; (void)fn; return iq_diag_set(d, IQ_ERR_INPUT, "%s: not implemented", path); }
