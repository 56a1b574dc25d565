// A stand-in for the few engine and editor types the Unity package's sample and glue use, and for the engine's own
// AOT.MonoPInvokeCallbackAttribute, so that tests/dist/run.sh compiles the package's Runtime and
// sample with Mono's compiler as Unity would with engine references. Only the signatures matter.
using System;

namespace AOT
{
    [AttributeUsage(AttributeTargets.Method)]
    public class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type type) { }
    }
}

namespace UnityEngine
{
    public class Object { }
    public class Component : Object { }
    public class Behaviour : Component { }
    public class MonoBehaviour : Behaviour { }

    public enum KeyCode { None = 0, Space = 32, V = 118 }

    public static class Input
    {
        public static bool GetKey(KeyCode key) { return false; }
    }

    public static class Debug
    {
        public static void Log(object message) { }
        public static void LogWarning(object message) { }
        public static void LogError(object message) { }
        public static void LogException(Exception exception) { }
    }

    public static class Application
    {
        public static event Action quitting;
        internal static void Quit() { if (quitting != null) quitting(); }
    }

    public enum RuntimeInitializeLoadType { AfterSceneLoad, BeforeSceneLoad, SubsystemRegistration = 4 }

    [AttributeUsage(AttributeTargets.Method)]
    public class RuntimeInitializeOnLoadMethodAttribute : Attribute
    {
        public RuntimeInitializeOnLoadMethodAttribute(RuntimeInitializeLoadType type) { }
    }

    public static class GUILayout
    {
        public static void Label(string text) { }
        public static string TextField(string text) { return text; }
        public static bool Button(string text) { return false; }
    }
}

namespace UnityEditor
{
    [AttributeUsage(AttributeTargets.Class)]
    public class InitializeOnLoadAttribute : Attribute { }

    public static class AssemblyReloadEvents
    {
        public delegate void AssemblyReloadCallback();
        public static event AssemblyReloadCallback beforeAssemblyReload;
        internal static void Reload() { if (beforeAssemblyReload != null) beforeAssemblyReload(); }
    }
}
