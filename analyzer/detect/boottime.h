/* boottime.h: the post-ingest pass that gives raw dmesg records a wall
 * time from a boot time found elsewhere in the bundle (boottime.c). */
#ifndef IQ_BOOTTIME_H
#define IQ_BOOTTIME_H

#include "../store/store.h"

/* For every file with boot-relative kernel records (ts NULL, ts_how
 * 'boot_relative', kernel_events.boot_s set), finds its node's boot time
 * and sets ts = boot time + boot_s (ts_how 'boot_anchored', kernel_events.ts
 * too), with a meta row "boot_time <path>" = "<time> from <basis>". Boot
 * times come from kernel records with both clocks, boot-time files, the
 * "Linux version" line, and the same kernel message printed boot-relative
 * and with a wall clock; of several boots of a node, a file takes the one
 * its messages match, else the latest it can belong to by its mtime.
 * Records no boot time reaches are left alone. Runs in a savepoint (inside
 * or outside a transaction); idempotent. Returns 0 or IQ_ERR_DB with
 * d->msg. */
int iq_boottime_resolve(struct iq_store *s, struct iq_diag *d);

#endif
