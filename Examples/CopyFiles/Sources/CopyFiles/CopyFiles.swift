// Copying with Sluice's `Copier`, on the public library alone: one file, many files with a
// progress subscriber, a directory tree, then a copy cancelled before its end. The program makes
// its own sources and checks every copy against them.
//
// usage: CopyFiles DIRECTORY   (the sources and the copies go in DIRECTORY/sources and
//                               DIRECTORY/copies, which must not exist yet)
import Foundation
import Sluice

@main
struct CopyFiles {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: CopyFiles DIRECTORY\n".utf8))
            exit(64)
        }
        do {
            let samples = try Samples(in: arguments[1])
            try await copyOneFile(samples.image, to: samples.copies + "/disk-copy.img")
            try await copyManyFiles(samples.files, into: samples.copies)
            try await copyDirectoryTree(samples.tree, into: samples.copies)
            try await copyAndCancel(samples.large, to: samples.copies + "/large-copy.bin")
        } catch {
            FileHandle.standardError.write(Data("CopyFiles: \(error)\n".utf8))
            exit(1)
        }
    }
}
