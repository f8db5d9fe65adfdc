extension FollowedFile {
    /// Where a follower stands, as a value to store and resume from: every generation still to
    /// read (the one being read with its offset, then those queued behind it, in order) and the
    /// generations left that are watched for late bytes, each known by its ``Identity``, the
    /// CRC-32 and length of its first bytes (at most 1 KiB), the size it was seen to have, and
    /// the CRC-32 of the (at most 4 KiB) bytes before its offset.
    ///
    /// Each ``FollowedChunk`` carries the checkpoint just after it. A consumer that has made a
    /// chunk durable where it put it acknowledges it (``FollowedFile/acknowledge(_:)``), and
    /// ``FollowedFile/checkpoint`` is the last checkpoint acknowledged: what a resumed follower
    /// (``FollowedFile/open(_:resumingFrom:options:onEvent:)``) starts from, so that nothing is
    /// shipped twice nor skipped (<doc:ExactlyOnce>).
    ///
    /// ``encoded`` is a few lines of text, and ``init(encoded:)`` reads them back.
    public struct Checkpoint: Sendable, Hashable {
        /// One generation: who it is, how far it was read.
        package struct Mark: Sendable, Hashable {
            package var identity: Identity
            /// The CRC-32 and length of its first bytes (at most 1 KiB).
            package var fingerprint: (crc: UInt32, length: Int)
            /// How far it was read, in bytes.
            package var offset: Int64
            /// The largest size seen, in bytes.
            package var knownSize: Int64
            /// The CRC-32 and length of the bytes just before ``offset`` (at most 4 KiB).
            package var tail: (crc: UInt32, length: Int)
            /// A copytruncate's copy: complete, read to its end without settling.
            package var isComplete: Bool

            package static func == (a: Mark, b: Mark) -> Bool {
                (a.identity, a.offset, a.knownSize, a.isComplete) == (b.identity, b.offset, b.knownSize, b.isComplete)
                    && (a.fingerprint.crc, a.fingerprint.length, a.tail.crc, a.tail.length)
                        == (b.fingerprint.crc, b.fingerprint.length, b.tail.crc, b.tail.length)
            }

            package func hash(into hasher: inout Hasher) {
                hasher.combine(identity)
                hasher.combine(offset)
            }
        }

        /// The generations to read, in order: the first is the one being read.
        package var reading: [Mark]
        /// The generations left, watched for late bytes.
        package var retired: [Mark]

        package init(reading: [Mark], retired: [Mark]) {
            (self.reading, self.retired) = (reading, retired)
        }

        /// The generation being read and the offset reached in it; `nil` when no file was there.
        public var position: Position? {
            reading.first.map { Position(generation: $0.identity, offset: $0.offset) }
        }

        private static let header = "sluice-follow-checkpoint 1"

        /// The checkpoint as text: a first line naming the format and its version, then one line
        /// per generation (`read` or `left`, then its device, inode, birth time, whether that is
        /// a change time, first bytes' CRC-32 and length, offset, size seen, the CRC-32 and
        /// length of the bytes before the offset, and whether it is a complete copy), each
        /// ending with a newline.
        public var encoded: String {
            func line(_ kind: String, _ mark: Mark) -> String {
                let identity = mark.identity
                let fields: [String] = [
                    kind, "\(identity.device)", "\(identity.inode)", "\(identity.birthSeconds)", "\(identity.birthNanoseconds)",
                    identity.birthIsChangeTime ? "c" : "b", "\(mark.fingerprint.crc)", "\(mark.fingerprint.length)", "\(mark.offset)",
                    "\(mark.knownSize)", "\(mark.tail.crc)", "\(mark.tail.length)", mark.isComplete ? "1" : "0",
                ]
                return fields.joined(separator: " ") + "\n"
            }
            return Self.header + "\n" + reading.map { line("read", $0) }.joined() + retired.map { line("left", $0) }.joined()
        }

        /// Reads back what ``encoded`` wrote; `nil` for text in another format or version.
        public init?(encoded: String) {
            let lines = encoded.split(separator: "\n", omittingEmptySubsequences: true)
            guard lines.first == Substring(Self.header) else { return nil }
            (reading, retired) = ([], [])
            for line in lines.dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count == 13, let mark = Self.mark(fields) else { return nil }
                switch fields[0] {
                case "read": reading.append(mark)
                case "left": retired.append(mark)
                default: return nil
                }
            }
        }

        private static func mark(_ fields: [Substring]) -> Mark? {
            guard let device = UInt64(fields[1]), let inode = UInt64(fields[2]), let seconds = Int64(fields[3]),
                let nanoseconds = Int64(fields[4]), fields[5] == "c" || fields[5] == "b",
                let firstCRC = UInt32(fields[6]), let firstLength = Int(fields[7]), let offset = Int64(fields[8]),
                let size = Int64(fields[9]), let tailCRC = UInt32(fields[10]), let tailLength = Int(fields[11]),
                fields[12] == "0" || fields[12] == "1", offset >= 0, size >= 0, firstLength >= 0, tailLength >= 0
            else { return nil }
            let identity = Identity(
                device: device, inode: inode, birthSeconds: seconds, birthNanoseconds: nanoseconds, birthIsChangeTime: fields[5] == "c")
            return Mark(
                identity: identity, fingerprint: (firstCRC, firstLength), offset: offset, knownSize: size,
                tail: (tailCRC, tailLength), isComplete: fields[12] == "1")
        }
    }
}
