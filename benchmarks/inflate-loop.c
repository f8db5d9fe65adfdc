/* The physical limit of gzip decompression with zlib on one thread: read(2) the compressed
 * file in 1 MiB chunks, inflate(3) every member (windowBits 15 + 32: gzip or zlib header),
 * write(2) the output in 1 MiB chunks. No CRC-32 beyond what inflate checks itself, no
 * pipeline, no threads.
 * Build: clang -O2 -o inflate-loop inflate-loop.c -lz
 * Usage: inflate-loop IN.gz OUT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

enum { CHUNK = 1 << 20 };

static int write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: inflate-loop IN.gz OUT\n"); return 64; }
    int in = open(argv[1], O_RDONLY);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) { perror("open"); return 1; }
    unsigned char *input = malloc(CHUNK), *output = malloc(CHUNK);
    z_stream s = {0};
    if (inflateInit2(&s, 15 + 32) != Z_OK) return 1;
    int status = Z_OK;
    for (;;) {
        ssize_t n = read(in, input, CHUNK);
        if (n < 0) { perror("read"); return 1; }
        if (n == 0) break;
        s.next_in = input;
        s.avail_in = (uInt)n;
        while (s.avail_in > 0) {
            s.next_out = output;
            s.avail_out = CHUNK;
            status = inflate(&s, Z_NO_FLUSH);
            if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
                fprintf(stderr, "inflate: %d\n", status);
                return 1;
            }
            if (write_all(out, output, CHUNK - s.avail_out) < 0) { perror("write"); return 1; }
            if (status == Z_STREAM_END) inflateReset(&s); /* the next member, if any */
            else if (status == Z_BUF_ERROR) break;
        }
    }
    inflateEnd(&s);
    return close(out) == 0 ? 0 : 1;
}
