import CZlib

/// The owner of one zlib stream (`z_stream`) at a fixed heap address.
///
/// zlib keeps pointers into the `z_stream` it was initialised with, so the structure is
/// allocated once and never moves (a `z_stream` stored inline in a Swift value could). Every
/// call sets `next_in`/`next_out` for its own buffers and clears them before returning, so no
/// pointer outlives the buffer it came from.
///
/// Concurrency: not `Sendable`; confined to the one stage (task or thread) that owns it.
/// Each call is a bounded synchronous step of CPU work.
///
/// Return codes: `Z_STREAM_ERROR` from our calls means Sluice misused zlib and stops the
/// process (precondition); `Z_BUF_ERROR` means "no progress possible yet" and is returned as is;
/// the other codes are the caller's to interpret.
final class ZStream {
    /// Which direction the stream runs.
    enum Mode: Equatable {
        /// Compression to a gzip member (`deflateInit2`, windowBits 31, memLevel 8).
        case deflate(CompressionLevel)
        /// Compression to raw deflate data (RFC 1951) with no header, trailer or check value
        /// (`deflateInit2`, windowBits -15, memLevel 8): the caller writes the wrapper.
        ///
        /// memLevel 8, not zlib's largest (9): the larger hash table gives fewer false
        /// candidates on random data but finds more true ones on text, and text is where the
        /// time goes once random data is stored (``IncompressibleData``). Counted with
        /// callgrind on 4 MiB of text in 256 KiB blocks: 5.6 % more instructions at level 6
        /// (13 % at 1, 1.8 % at 9) for 0.08 % smaller output.
        case rawDeflate(CompressionLevel)
        /// Raw deflate data made of stored blocks only (RFC 1951 §3.2.4; `deflateInit2` at
        /// level 0, windowBits -15, memLevel 8): the input copied, in blocks of at most
        /// 65,535 bytes, for data deflate cannot make smaller.
        case rawStored
        /// Decompression of gzip members only (`inflateInit2`, windowBits 31): a zlib stream or
        /// raw deflate is rejected with `incorrect header check`.
        case inflate
        /// Decompression of raw deflate data (`inflateInit2`, windowBits -15): a segment of an
        /// indexed member, from its access point (`GzipIndex`).
        case rawInflate

        /// Whether the stream makes raw deflate data (no wrapper).
        var isRaw: Bool {
            switch self {
            case .rawDeflate, .rawStored, .rawInflate: true
            case .deflate, .inflate: false
            }
        }

        /// Whether the stream decompresses.
        var isInflate: Bool { self == .inflate || self == .rawInflate }
    }

    /// A pair of allocation functions handed to zlib as `zalloc`/`zfree`, so a test can make
    /// zlib's allocations fail (`Z_MEM_ERROR`). `nil` everywhere means zlib's own.
    struct Allocator: Sendable {
        /// zlib's `alloc_func`: `(opaque, items, size)`, returns `nil` on failure.
        var allocate: @convention(c) (UnsafeMutableRawPointer?, UInt32, UInt32) -> UnsafeMutableRawPointer?
        /// zlib's `free_func`: `(opaque, address)`.
        var free: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void
    }

    /// The outcome of one `deflate` or `inflate` call.
    struct Step {
        /// zlib's return code (`Z_OK`, `Z_STREAM_END`, `Z_BUF_ERROR`, `Z_DATA_ERROR`, …).
        var code: Int32
        /// Bytes taken from the front of the input.
        var consumed: Int
        /// Bytes written at the front of the output.
        var produced: Int
    }

    /// The direction this stream was created for.
    let mode: Mode

    /// The `z_stream`, allocated once; valid until `deinit`.
    private let stream: UnsafeMutablePointer<z_stream>

    /// Whether `deflateInit2`/`inflateInit2` succeeded and `end()` has not run yet.
    private(set) var isActive = false

    /// Creates and initialises a stream.
    ///
    /// - Parameters:
    ///   - mode: deflate at a level, or inflate.
    ///   - allocator: allocation functions for zlib, or `nil` for zlib's own.
    /// - Throws: ``GzipError`` of kind ``GzipError/Kind/zlib(code:)`` when zlib cannot start
    ///   (`Z_MEM_ERROR` when memory runs out, `Z_VERSION_ERROR` for an incompatible library).
    init(_ mode: Mode, allocator: Allocator? = nil) throws(GzipError) {
        self.mode = mode
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        if let allocator {
            stream.pointee.zalloc = allocator.allocate
            stream.pointee.zfree = allocator.free
        }
        let code: Int32
        switch mode {
        case .deflate(let level):
            code = CZlib_deflateInit2(stream, Int32(level.value), Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY)
        case .rawDeflate(let level):
            code = CZlib_deflateInit2(stream, Int32(level.value), Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)
        case .rawStored:
            code = CZlib_deflateInit2(stream, Z_NO_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)
        case .inflate:
            code = CZlib_inflateInit2(stream, 31)
        case .rawInflate:
            code = CZlib_inflateInit2(stream, -15)
        }
        precondition(code != Z_STREAM_ERROR, "zlib rejected the stream parameters (Z_STREAM_ERROR)")
        guard code == Z_OK else {
            // deinit runs (every stored property is set) and frees `stream`.
            throw GzipError(.zlib(code: code), offset: 0, zlibMessage: Self.message(of: stream))
        }
        isActive = true
    }

    deinit {
        end()
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Ends the stream and frees zlib's state (`deflateEnd`/`inflateEnd`). Idempotent.
    func end() {
        guard isActive else { return }
        isActive = false
        switch mode {
        case .deflate, .rawDeflate, .rawStored: _ = deflateEnd(stream)
        case .inflate, .rawInflate: _ = inflateEnd(stream)
        }
    }

    /// Compresses from `input` into `output` (`deflate`).
    ///
    /// - Parameters:
    ///   - input: uncompressed bytes; only the first 4 GiB - 1 are offered in one call.
    ///   - output: room for compressed bytes; must not be empty.
    ///   - flush: `Z_NO_FLUSH` while input continues, `Z_FINISH` at its end.
    /// - Returns: zlib's code and the bytes consumed and produced.
    func deflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, flush: Int32) -> Step {
        precondition(isActive, "deflate on an ended stream")
        precondition(!mode.isInflate, "deflate on an inflate stream")
        return step(input, output) { CZlib.deflate($0, flush) }
    }

    /// Starts a new raw deflate stream on the same memory (`deflateReset`): the next
    /// ``deflate(_:into:flush:)`` begins a new block with an empty history.
    func resetDeflate() {
        precondition(isActive && mode.isRaw && !mode.isInflate, "resetDeflate on an inactive or non-raw stream")
        let code = deflateReset(stream)
        precondition(code == Z_OK, "deflateReset failed with \(code)")
    }

    /// Makes `dictionary` the history the next raw deflate block may refer back to
    /// (`deflateSetDictionary`); zlib keeps at most its last 32 KiB - 262 bytes. Call it right
    /// after ``resetDeflate()``.
    ///
    /// - Parameter dictionary: the bytes that precede the next input in the uncompressed data.
    func setDictionary(_ dictionary: UnsafeRawBufferPointer) {
        guard case .rawDeflate = mode, isActive else { preconditionFailure("setDictionary on an inactive or non-raw stream") }
        guard let base = dictionary.baseAddress, !dictionary.isEmpty else { return }
        let code = deflateSetDictionary(stream, base.assumingMemoryBound(to: Bytef.self), uInt(dictionary.count))
        precondition(code == Z_OK, "deflateSetDictionary failed with \(code)")
    }

    /// zlib's upper bound on the compressed size of `count` input bytes ended with `Z_FINISH`
    /// (`deflateBound`), for this stream's parameters.
    ///
    /// - Parameter count: the input size in bytes (>= 0, < 4 GiB).
    func deflateBound(forInputCount count: Int) -> Int {
        precondition(isActive && !mode.isInflate, "deflateBound on an inactive or inflate stream")
        return Int(CZlib.deflateBound(stream, uLong(count)))
    }

    /// Decompresses from `input` into `output` (`inflate` with `Z_NO_FLUSH`).
    ///
    /// - Parameters:
    ///   - input: compressed bytes; only the first 4 GiB - 1 are offered in one call.
    ///   - output: room for decompressed bytes; must not be empty.
    /// - Returns: zlib's code and the bytes consumed and produced.
    func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Step {
        precondition(isActive, "inflate on an ended stream")
        guard mode.isInflate else { preconditionFailure("inflate on a deflate stream") }
        return step(input, output) { CZlib.inflate($0, Z_NO_FLUSH) }
    }

    /// Makes `dictionary` the history a raw inflate refers back to (`inflateSetDictionary`):
    /// the last 32 KiB of output before the data it is given next.
    func setInflateDictionary(_ dictionary: UnsafeRawBufferPointer) {
        guard mode == .rawInflate, isActive else { preconditionFailure("setInflateDictionary on an inactive or non-raw stream") }
        guard let base = dictionary.baseAddress, !dictionary.isEmpty else { return }
        let code = inflateSetDictionary(stream, base.assumingMemoryBound(to: Bytef.self), uInt(dictionary.count))
        precondition(code == Z_OK, "inflateSetDictionary failed with \(code)")
    }

    /// Whether the last inflate call left the stream between two blocks, on a byte boundary,
    /// and not in the final block (zlib's `data_type`: 128 at a block's start, 64 in the last
    /// block, the low bits the unused bits of the last byte): where an access point of an
    /// indexed member must leave it. Read it after a call that made progress: the next call
    /// moves zlib on from there even when it has no input.
    var isBetweenBlocks: Bool {
        let type = stream.pointee.data_type
        return type & 128 != 0 && type & 64 == 0 && type & 7 == 0
    }

    /// Prepares an inflate stream for the next gzip member (`inflateReset`), keeping its memory.
    func resetForNextMember() {
        precondition(isActive && mode.isInflate, "reset on an inactive or deflate stream")
        let code = inflateReset(stream)
        precondition(code == Z_OK, "inflateReset failed with \(code)")
    }

    /// zlib's check value so far (`strm->adler`): with a gzip wrapper, the CRC-32 of the
    /// uncompressed data of the current member (input for deflate, output for inflate).
    var checkValue: UInt32 {
        UInt32(truncatingIfNeeded: stream.pointee.adler)
    }

    /// zlib's message for the last error (`strm->msg`), if any.
    var message: String? {
        Self.message(of: stream)
    }

    private static func message(of stream: UnsafeMutablePointer<z_stream>) -> String? {
        stream.pointee.msg.map { String(cString: $0) }
    }

    private func step(
        _ input: UnsafeRawBufferPointer,
        _ output: UnsafeMutableRawBufferPointer,
        _ call: (UnsafeMutablePointer<z_stream>) -> Int32
    ) -> Step {
        precondition(!output.isEmpty, "zlib needs room for output")
        let inputCount = UInt32(clamping: input.count)
        let outputCount = UInt32(clamping: output.count)
        stream.pointee.next_in = input.baseAddress.map {
            UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
        }
        stream.pointee.avail_in = inputCount
        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = outputCount
        let code = call(stream)
        let consumed = Int(inputCount - stream.pointee.avail_in)
        let produced = Int(outputCount - stream.pointee.avail_out)
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        stream.pointee.next_out = nil
        stream.pointee.avail_out = 0
        precondition(code != Z_STREAM_ERROR, "zlib reported Z_STREAM_ERROR: the stream was misused")
        return Step(code: code, consumed: consumed, produced: produced)
    }
}
