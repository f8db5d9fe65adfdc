#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSluiceShims

extension Follower {
    /// One generation of the followed name, open: where it is read, how big it was seen, and
    /// what its first bytes and the bytes before the position were, to know it again.
    /// Confined to the follower's thread.
    final class Generation {
        let descriptor: Descriptor
        let identity: FollowedFile.Identity
        /// The CRC-32 and length of the first min(size, ``fingerprintLength``) bytes.
        var fingerprint: (crc: UInt32, length: Int)
        var position: Int64
        /// The largest size seen, in bytes.
        var knownSize: Int64
        var lastGrowth: ContinuousClock.Instant
        /// Up to ``tailLength`` bytes just before ``position``: what a copytruncate's copy must hold.
        var tail: [UInt8] = []
        /// The CRC-32 and length of the bytes before ``position`` as a checkpoint recorded them,
        /// where the file no longer holds them (a resumed follower's file truncated meanwhile).
        var recordedTail: (crc: UInt32, length: Int)?
        /// A copy found for a copytruncate: complete, so it needs no settling.
        var isComplete = false
        var watch: CInt?

        static let fingerprintLength = 1024
        static let tailLength = 4096

        /// Opens `name` in `directory` if it is a regular file.
        ///
        /// - Returns: the generation, or the kind of what is there instead (`nil`, nil for no file).
        static func open(_ name: Pathname, in directory: DirectoryHandle) throws(FileError) -> (Generation?, FileStatus.Kind?) {
            let descriptor: Descriptor
            do { descriptor = try directory.openFile(name, O_RDONLY | O_NONBLOCK) } catch {
                if error.code == .notFound { return (nil, nil) }
                throw error
            }
            let path = directory.path.appending(name)
            let status = try descriptor.statusClosingOnFailure(path: path)
            guard status.kind == .regular else {
                try? descriptor.close()
                return (nil, status.kind)
            }
            return (try Generation(descriptor, status: status, path: path), .regular)
        }

        init(_ descriptor: Descriptor, status: FileStatus, path: Pathname) throws(FileError) {
            self.descriptor = descriptor
            var seconds: Int64 = 0
            var nanoseconds: UInt32 = 0
            let birth = CSluiceShims_birth_time(descriptor.rawValue, &seconds, &nanoseconds)
            let hasBirth = birth == 0
            identity = FollowedFile.Identity(
                device: status.device, inode: status.inode,
                birthSeconds: hasBirth ? seconds : status.changeTime.seconds,
                birthNanoseconds: hasBirth ? Int64(nanoseconds) : status.changeTime.nanoseconds,
                birthIsChangeTime: !hasBirth)
            position = 0
            knownSize = status.size
            lastGrowth = .now
            fingerprint = (0, 0)
            fingerprint = try Self.fingerprint(of: descriptor, upTo: Self.fingerprintLength, path: path)
        }

        deinit { try? descriptor.close() }

        /// Its device and inode: what names it while it is held open.
        var fileIdentity: FileIdentity { FileIdentity(device: identity.device, inode: identity.inode) }

        /// The CRC-32 and length of the first min(size, `limit`) bytes of `descriptor`.
        static func fingerprint(of descriptor: Descriptor, upTo limit: Int, path: Pathname) throws(FileError) -> (crc: UInt32, length: Int) {
            let bytes = try read(descriptor, at: 0, count: limit, path: path)
            return (CRC32(bytes).value, bytes.count)
        }

        /// Up to `count` bytes at `offset` (fewer at the end of the file).
        static func read(_ descriptor: Descriptor, at offset: Int64, count: Int, path: Pathname) throws(FileError) -> [UInt8] {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
            defer { buffer.deallocate() }
            var filled = 0
            do throws(ErrorNumber) {
                while filled < count {
                    let got = try descriptor.read(
                        fromAbsoluteOffset: offset + Int64(filled), into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                    if got == 0 { break }
                    filled += got
                }
            } catch { throw FileError.read(path: path, errno: error) }
            return Array(buffer.prefix(filled))
        }

        /// Whether the first bytes are still those first seen (a file truncated and written
        /// again on the same inode no longer matches); a fingerprint shorter than
        /// ``fingerprintLength`` grows with the file.
        func firstBytesMatch(path: Pathname) throws(FileError) -> Bool {
            let now = try Self.fingerprint(of: descriptor, upTo: Self.fingerprintLength, path: path)
            guard now.length >= fingerprint.length else { return false }
            if now.length > fingerprint.length {
                let prefix = try Self.read(descriptor, at: 0, count: fingerprint.length, path: path)
                guard CRC32(prefix).value == fingerprint.crc else { return false }
                fingerprint = now
                return true
            }
            return now.crc == fingerprint.crc
        }

        /// The CRC-32 and length of the bytes before ``position``, as a copy must hold them.
        var tailDigest: (crc: UInt32, length: Int) { recordedTail ?? (CRC32(tail).value, tail.count) }

        /// Where it stands, for a checkpoint.
        var mark: FollowedFile.Checkpoint.Mark {
            .init(identity: identity, fingerprint: fingerprint, offset: position, knownSize: knownSize, tail: tailDigest, isComplete: isComplete)
        }

        /// Records `bytes` as read at ``position``, and moves it on.
        func consumed(_ chunk: Chunk) {
            position += Int64(chunk.count)
            recordedTail = nil
            chunk.withUnsafeBytes { bytes in
                tail.append(contentsOf: bytes.suffix(Self.tailLength))
                if tail.count > Self.tailLength { tail.removeFirst(tail.count - Self.tailLength) }
            }
        }

        /// Whether `other`, a file beside it, holds what this generation held up to its
        /// position: the same first bytes and the same ``tail`` before the position.
        func isCopied(by other: Generation, path: Pathname) throws(FileError) -> Bool {
            guard other.identity.inode != identity.inode || other.identity.device != identity.device,
                other.knownSize >= position, other.fingerprint.length >= fingerprint.length
            else { return false }
            let first = try Self.read(other.descriptor, at: 0, count: fingerprint.length, path: path)
            guard CRC32(first).value == fingerprint.crc else { return false }
            let digest = tailDigest
            let before = try Self.read(other.descriptor, at: position - Int64(digest.length), count: digest.length, path: path)
            return before.count == digest.length && CRC32(before).value == digest.crc
        }
    }
}
