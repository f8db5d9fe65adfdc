import Testing
@testable import Sluice
import SluiceTestSupport

/// ``RecordFile``: an unlinked scratch file of length-prefixed records, read back by offset.
@Suite struct RecordFileTests {
    static func read(_ file: RecordFile, _ header: RecordFile.Header) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: header.byteCount)
        try bytes.withUnsafeMutableBytes { try file.read(header, into: $0) }
        return bytes
    }

    @Test func recordsComeBackAtTheirOffsetsWithTheirTags() async throws {
        try await withScratchDirectory { directory in
            var file = try RecordFile.createUnlinked(in: directory.path, prefix: ".records-")
            defer { file.close() }
            #expect(try entries(in: directory.path).isEmpty, "the file is unlinked at creation")
            let payloads: [[UInt8]] = [[1, 2, 3], [], Array(repeating: 7, count: 5000)]
            for (tag, payload) in payloads.enumerated() {
                try payload.withUnsafeBytes { try file.append($0, tag: UInt64(tag) << 40) }
            }
            #expect(file.endOffset == 3 * RecordFile.headerSize + 5003)
            var offset: Int64 = 0
            for (tag, payload) in payloads.enumerated() {
                let header = try file.header(at: offset)
                #expect(header.byteCount == payload.count && header.tag == UInt64(tag) << 40)
                #expect(try Self.read(file, header) == payload)
                offset = header.endOffset
            }
            #expect(offset == file.endOffset)
        }
    }

    @Test func rewindWritesTheNextRecordAtTheStart() async throws {
        try await withScratchDirectory { directory in
            var file = try RecordFile.createUnlinked(in: directory.path, prefix: ".records-")
            defer { file.close() }
            try [UInt8](repeating: 1, count: 100).withUnsafeBytes { try file.append($0, tag: 1) }
            file.rewind()
            #expect(file.endOffset == 0)
            try [UInt8]([9, 9]).withUnsafeBytes { try file.append($0, tag: 2) }
            let header = try file.header(at: 0)
            #expect(header.tag == 2 && header.byteCount == 2)
            #expect(try Self.read(file, header) == [9, 9])
            #expect(file.endOffset == RecordFile.headerSize + 2)
        }
    }

    @Test func aMissingDirectoryFailsToCreateWithItsPath() throws {
        let error = try #require(throws: FileError.self) {
            _ = try RecordFile.createUnlinked(in: "/nonexistent/sluice", prefix: ".records-")
        }
        #expect(error.code == .notFound && error.errno == .noSuchFileOrDirectory)
        #expect(error.operation == .create && error.path == "/nonexistent/sluice")
        #expect((error.cause as? FileError)?.operation == .open, "the error of the name tried is the cause")
    }

    @Test func aRecordCutShortFailsToReadWithEIO() async throws {
        try await withScratchDirectory { directory in
            var file = try RecordFile.createUnlinked(in: directory.path, prefix: ".records-")
            defer { file.close() }
            try [UInt8]([1, 2, 3]).withUnsafeBytes { try file.append($0, tag: 0) }
            let pastTheEnd = try #require(throws: FileError.self) { _ = try file.header(at: file.endOffset) }
            #expect(pastTheEnd.operation == .read && pastTheEnd.errno == .ioError)
            #expect(pastTheEnd.path == directory.path)
            // A header that promises more bytes than the file holds.
            let header = RecordFile.Header(offset: 0, byteCount: 10, tag: 0)
            let cut = try #require(throws: FileError.self) { _ = try Self.read(file, header) }
            #expect(cut.operation == .read && cut.errno == .ioError)
        }
    }
}
