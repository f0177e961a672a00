/*
 * wirekit umbrella header: includes every module of the dependency-free library.
 * (wirekit-pq and wirekit-redis have their own headers: wirekit/pq.h, wirekit/redis.h.)
 */
#ifndef WIREKIT_H
#define WIREKIT_H

#include "arena.h"
#include "buffer.h"
#include "cache.h"
#include "core.h"
#include "event.h"
#include "format.h"
#include "json.h"
#include "mediatype.h"
#include "stream.h"
#include "msgpack.h"
#include "pg.h"
#include "schema.h"
#include "serve.h"
#include "text.h"
#include "utf8.h"
#include "value.h"

#endif
