// A stand-in for the few engine types the Unity package's sample uses, and for the engine's own
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
    }

    public static class GUILayout
    {
        public static void Label(string text) { }
        public static string TextField(string text) { return text; }
        public static bool Button(string text) { return false; }
    }
}
