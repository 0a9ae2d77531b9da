/* zones.h: zone-less times given the zone the bundle names for their node
 * (zones.c). */
#ifndef IQ_ZONES_H
#define IQ_ZONES_H

#include "../store/store.h"

/* Moves the zone-less times of each node with an etc/timezone or
 * timedatectl record into that zone, unless --tz was given (meta
 * tz_option); once per node (meta "zone NODE"). 0 or IQ_ERR_DB. */
int iq_zones_resolve(struct iq_store *s, struct iq_diag *d);

#endif
