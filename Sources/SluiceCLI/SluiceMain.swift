import Sluice

@main
struct SluiceMain {
    static func main() {
        print("sluice")
    }
}
