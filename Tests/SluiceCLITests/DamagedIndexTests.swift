import SluiceTestSupport
import Testing

/// C56: every command that reads an index checks all of it. Any field of the `SL` index that
/// disagrees with the data (a segment's compressed length or CRC-32, the count, the total) is a
/// warning naming the segment (or the count), exit 2, with the right output: for `-t`, `-c` at
/// `-p 1` and `-p 2`, and `--range` (over the first segment, or the first two, away from the
/// damage but for `lengthOffByFive`).
@Suite(.timeLimit(.minutes(3)))
struct DamagedIndexTests {
    /// Where a field lies in the member: the index's data starts at byte 16 (after the fixed
    /// header, XLEN and the subfield's ID and length), its table at 16 + 22.
    enum Damage: String, CaseIterable, Sendable {
        /// Three bytes of segment 3's compressed length overwritten (C56).
        case lengthOverwritten
        /// Segment 2's compressed length 5 bytes more than it is.
        case lengthOffByFive
        /// A byte of segment 3's CRC-32 zeroed (C56).
        case crc32
        /// The count of segments one less.
        case count
        /// The total size 256 bytes more (still in the last segment).
        case total

        func apply(to member: inout [UInt8]) {
            let table = 16 + 22
            switch self {
            case .lengthOverwritten: member.replaceSubrange(table + 16..<table + 19, with: [0xFF, 0xFF, 0xFF])
            case .lengthOffByFive: member[table + 8] &+= 5
            case .crc32: member[table + 16 + 5] = member[table + 16 + 5] == 0 ? 1 : 0
            case .count: member[16 + 18] -= 1
            case .total: member[16 + 11] &+= 1
            }
        }

        /// What the warning must name.
        var named: String {
            switch self {
            case .lengthOverwritten, .crc32: "segment 3"
            case .lengthOffByFive: "segment 2"
            case .count: "segments"
            case .total: "segment 3"
            }
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedIndexIsAWarningNamingTheSegment(damage: Damage) async throws {
        let (sandbox, data) = try await ParallelDecompressTests.indexedFile()
        var member = try #require(sandbox.contents("input.gz"))
        try #require(IndexedGzipTests.index(of: member)?.segments.count == 3)
        damage.apply(to: &member)
        try sandbox.write(member, to: "damaged.gz")
        // In the first segment; over the first two, the damage in the third (or the second).
        let ranges = [1000..<5000, 1000..<2_200_000]
        let commands: [[String]] = [
            ["-t", "-p", "1"], ["-t", "-p", "2"], ["-c", "-p", "1"], ["-c", "-p", "2"],
            ["-c", "--range", "\(ranges[0].lowerBound):\(ranges[0].upperBound)"],
            ["-c", "-p", "2", "--range", "\(ranges[1].lowerBound):\(ranges[1].upperBound)"],
        ]
        for arguments in commands {
            let range = arguments.contains("--range") ? ranges[arguments.count == 3 ? 0 : 1] : 0..<0
            let result = try await CLI.run(["decompress"] + arguments + ["damaged.gz"], in: sandbox)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(damage.named) && result.stderr.contains("index"), "\(arguments): \(result.stderr)")
            let expected: [UInt8] = arguments[0] == "-t" ? [] : range.isEmpty ? data : Array(data[range])
            let isRight = result.stdout == expected
            #expect(isRight, "\(arguments): \(result.stdout.count) bytes")
        }
    }
}
