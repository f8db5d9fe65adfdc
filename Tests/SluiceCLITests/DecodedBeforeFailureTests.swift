import Foundation
import SluiceTestSupport
import Testing

/// Nothing decoded is held back by a later failure: when a member fails, standard output has
/// received every byte decoded before the failure was found, at least every byte of the members
/// before it, whatever decoded the members before it (one thread, the index's segments, BGZF
/// batches), as `gzip -dc` writes them. A file destination commits nothing.
@Suite(.timeLimit(.minutes(4)))
struct DecodedBeforeFailureTests {
    /// What made the good first member.
    enum Maker: String, CaseIterable, Sendable {
        case gzip, sluiceIndexed, bgzip
    }

    /// What is wrong with the second member.
    enum Fault: String, CaseIterable, Sendable {
        /// A byte of its deflate data changed.
        case damagedData
        /// Compression method 7.
        case unknownMethod
        /// FHCRC does not match the header.
        case headerCRC
        /// Its stored CRC-32 changed.
        case wrongCRC32
        /// Cut in the middle.
        case truncated
    }

    /// The first member's data: 5 MiB and a bit, three segments of an index.
    static let first = mixedData(count: (5 << 20) + 4321)
    /// The second member's data.
    static let second = pattern(count: 300_000, seed: 52)

    static func firstMember(_ maker: Maker, in sandbox: Sandbox) async throws -> [UInt8] {
        try sandbox.write(Self.first, to: "first")
        let command = switch maker {
        case .gzip: "gzip -n -c first > first.gz"
        case .sluiceIndexed: "\"$SLUICE\" compress -k first"
        case .bgzip: "command -v bgzip >/dev/null || { echo 'bgzip is not installed' >&2; exit 3; }; bgzip -c first > first.gz"
        }
        let made = try await CLI.shell(command, in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        return try #require(sandbox.contents("first.gz"))
    }

    static func secondMember(_ fault: Fault, in sandbox: Sandbox) async throws -> [UInt8] {
        try await writeWithGzip(Self.second, to: "second", in: sandbox)
        var member = try #require(sandbox.contents("second.gz"))
        switch fault {
        case .damagedData: member[member.count / 2] ^= 0x55
        case .unknownMethod: member[2] = 7
        case .headerCRC:
            let deflate = try await GzipBytes.rawDeflate(of: GzipBytes.headerFieldsPayload, in: sandbox)
            member = GzipBytes.headerFieldsMember(deflate: deflate, comment: "b comment")
        case .wrongCRC32: member[member.count - 8] ^= 0xFF
        case .truncated: member.removeLast(member.count / 2)
        }
        return member
    }

    @Test(arguments: Maker.allCases, Fault.allCases)
    func standardOutputGetsEveryByteDecodedBeforeTheFailure(maker: Maker, fault: Fault) async throws {
        let sandbox = try Sandbox()
        let file = try await Self.firstMember(maker, in: sandbox) + Self.secondMember(fault, in: sandbox)
        try sandbox.write(file, to: "both.gz")
        let gzip = try await CLI.shell("gzip -dc both.gz > by-gzip", in: sandbox)
        #expect(gzip.status == 1)
        let byGzip = try #require(sandbox.contents("by-gzip"))
        for options in [["-p", "1"], ["-p", "2"], ["-p", "2", "--chunk-size", "4K"]] {
            let result = try await CLI.run(["decompress", "-c"] + options + ["both.gz"], in: sandbox)
            #expect(result.status == 1, "\(options): \(result.stderr)")
            // Booleans, not the arrays: a failed expectation prints its operands, megabytes here.
            let output = result.stdout
            let keepsFirst = output.count >= Self.first.count && Array(output.prefix(Self.first.count)) == Self.first
            #expect(keepsFirst, "\(options): \(output.count) bytes, the first member has \(Self.first.count)")
            // What was decoded of the bad member is what gzip decodes of it.
            let common = min(output.count, byGzip.count)
            let agreesWithGzip = Array(output.prefix(common)) == Array(byGzip.prefix(common))
            #expect(agreesWithGzip, "\(options)")
            if fault == .wrongCRC32 {
                // The fault shows at the trailer, after every byte of the member's data.
                let isWhole = output == Self.first + Self.second
                #expect(isWhole, "\(options): \(output.count) bytes")
            }
        }
        let toFile = try await CLI.run(["decompress", "-p", "2", "-o", "out", "both.gz"], in: sandbox)
        #expect(toFile.status == 1)
        expectNotCommitted("out", in: sandbox)
    }
}
