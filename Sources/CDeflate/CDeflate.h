#ifndef SLUICE_CDEFLATE_H
#define SLUICE_CDEFLATE_H

/// libdeflate (Debian's libdeflate-dev), for its CRC-32: PCLMULQDQ on x86-64, about three
/// times zlib's crc32. Linked statically (`libdeflate.a`), so the binary needs no libdeflate
/// at run time.
#include <libdeflate.h>

#endif
