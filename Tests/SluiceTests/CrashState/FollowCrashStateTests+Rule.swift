import CZlib
@testable import Sluice

extension FollowCrashStateTests {
    /// What is wrong with `state`, a crash state of a follow with `--state` (none: it holds).
    ///
    /// No state at its name, or an empty one (a first run that died before its first record):
    /// nothing is claimed, and nothing was shipped (the destination, new in these scenarios, is
    /// absent or empty: a state lost or emptied after a chunk was shipped would have a rerun
    /// ship it again). Else the state parses and names the destination, which is there, is
    /// the file recorded, holds at least the recorded length, and its first `length` bytes are
    /// (with `-z`: complete gzip members ending exactly there, decompressed) the bytes the
    /// writer wrote up to the recorded checkpoint, in order, each once. `returned` (the restart
    /// is over): the destination is all the writer wrote, each byte once, and the state counts it all.
    static func violations(in state: CrashModel, returned: Bool, _ expected: Expected) -> [String] {
        guard let stateNode = state.node(at: Array("state".utf8)), let text = state.content(of: stateNode), !text.isEmpty
        else {
            if returned { return ["no state once the restart returned"] }
            let shipped = state.node(at: Array("dest".utf8)).flatMap { state.content(of: $0) } ?? []
            return shipped.isEmpty ? [] : ["no state is recorded while the destination holds \(shipped.count) bytes"]
        }
        guard let string = String(validating: text, as: UTF8.self), let recorded = FollowState(encoded: string) else {
            return ["the state holds \(text.count) bytes that are not a state"]
        }
        guard recorded.followed == expected.followed, recorded.isCompressed == expected.compressed, let destination = recorded.destination,
            destination.path == expected.destination, destination.identity == expected.identity
        else { return ["the state records another follow: \(recorded.encoded)"] }
        guard state.node(at: Array("dest".utf8)) == expected.destinationNode, let content = state.content(of: expected.destinationNode) else {
            return ["the state records \(destination.length) bytes of the destination, which is not there"]
        }
        let length = Int(destination.length)
        guard content.count >= length else {
            return ["the state records \(length) bytes of the destination, which holds \(content.count)"]
        }
        var messages: [String] = []
        do {
            let position = try position(of: recorded.checkpoint, in: expected.segments)
            let shipped = try expected.compressed ? gunzip(content[..<length]) : Array(content[..<length])
            if let difference = difference(shipped, Array(expected.stream[..<position])) {
                let what = expected.compressed ? "decompress to \(shipped.count) bytes," : "are"
                messages.append("the destination's first \(length) bytes \(what) not the \(position) bytes written up to the checkpoint: \(difference)")
            }
            if returned {
                let all = try expected.compressed ? gunzip(content[...]) : content
                if length != content.count || all != expected.stream {
                    messages.append("after the restart the state records \(length) of \(content.count) bytes, which hold \(all.count) bytes, not the \(expected.stream.count) written")
                }
            }
        } catch {
            messages.append("the state records \(length) bytes of the destination: \(error.reason)")
        }
        return messages
    }

    /// Where `checkpoint` stands in all the writer wrote: the generation it reads (known by
    /// its device and inode, and, for one file before and after a truncation, by its first
    /// bytes and those before the offset), from where that generation starts.
    static func position(of checkpoint: FollowedFile.Checkpoint, in segments: [Segment]) throws(Unshippable) -> Int {
        guard let mark = checkpoint.reading.first else { return 0 }
        let identity = FileIdentity(device: mark.identity.device, inode: mark.identity.inode)
        let offset = Int(mark.offset)
        let matching = segments.filter { segment in
            let content = segment.content
            return segment.identity == identity && offset <= content.count && mark.fingerprint.length <= content.count
                && mark.tail.length <= offset
                && CRC32(content[..<mark.fingerprint.length]).value == mark.fingerprint.crc
                && CRC32(content[(offset - mark.tail.length)..<offset]).value == mark.tail.crc
        }
        guard let segment = matching.first, matching.allSatisfy({ $0.start == segment.start }) else {
            throw Unshippable(reason: "its checkpoint (\(identity.inode) at \(offset)) is \(matching.isEmpty ? "in no" : "in more than one") generation written")
        }
        return segment.start + offset
    }

    /// Where `shipped` first differs from `expected`; `nil` when they are the same.
    static func difference(_ shipped: [UInt8], _ expected: [UInt8]) -> String? {
        guard shipped != expected else { return nil }
        let first = zip(shipped, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(shipped.count, expected.count)
        let zeros = first < shipped.count && shipped[first...].prefix(8).allSatisfy { $0 == 0 } ? " (zeros there)" : ""
        return "they differ from byte \(first)\(zeros)"
    }

    /// The bytes of the gzip members that make up `compressed`, which must end exactly with
    /// the end of one (none for no bytes).
    static func gunzip(_ compressed: ArraySlice<UInt8>) throws(Unshippable) -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard CZlib_inflateInit2(stream, 31) == Z_OK else { throw Unshippable(reason: "inflateInit2 failed") }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let input = Array(compressed)
        var (consumed, members) = (0, 0)
        while consumed < input.count {
            var code = Z_OK
            input.withUnsafeBytes { raw in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: raw.baseAddress!.assumingMemoryBound(to: Bytef.self) + consumed)
                stream.pointee.avail_in = UInt32(raw.count - consumed)
                while code == Z_OK {
                    code = buffer.withUnsafeMutableBytes { out in
                        stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                        stream.pointee.avail_out = UInt32(out.count)
                        return inflate(stream, Z_NO_FLUSH)
                    }
                    output += buffer[..<(buffer.count - Int(stream.pointee.avail_out))]
                }
                consumed = raw.count - Int(stream.pointee.avail_in)
            }
            guard code == Z_STREAM_END else {
                let reason = code == Z_BUF_ERROR ? "it ends within its member \(members + 1)" : stream.pointee.msg.map { String(cString: $0) } ?? "zlib \(code)"
                throw Unshippable(reason: "not complete gzip members: \(reason) (at byte \(consumed))")
            }
            members += 1
            inflateReset(stream)
        }
        return output
    }
}
