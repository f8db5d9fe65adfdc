#ifndef SLUICE_CZLIB_H
#define SLUICE_CZLIB_H

#include <zlib.h>

/// deflateInit2 is a macro in <zlib.h>; Swift cannot call macros, so it is wrapped here.
static inline int CZlib_deflateInit2(z_streamp strm, int level, int method, int windowBits,
                                     int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

/// inflateInit2 is a macro in <zlib.h>; wrapped for Swift.
static inline int CZlib_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

#endif
