// The Unity package's glue between the SDK and the engine: the SDK's lifetime follows the editor's
// domain reloads and the player's quit, and what goes wrong reaches Unity's console. It is an
// assembly of its own (Sdkpp.Unity, with engine references) so that the binding's assembly needs
// none (noEngineReferences).
#if UNITY_5_3_OR_NEWER
using System;
using UnityEngine;

namespace Sdkpp.Unity
{
    /// <summary>
    /// Installed before the first scene loads: calls Sdk.Shutdown when the application quits (in the
    /// editor: when play mode ends), routes Sdk.UnhandledException to Debug.LogException and the
    /// SDK's log (Sdk.SetLogCallback) to Debug.Log, Debug.LogWarning and Debug.LogError. The
    /// editor also shuts the SDK down before every assembly reload (SdkppEditorHooks), so that
    /// entering play mode again starts it afresh.
    /// </summary>
    public static class SdkppUnity
    {
        static bool installed;

        /// <summary>
        /// Subscribes to the engine's events (once) and sends the SDK's log to the console (again
        /// after each Shutdown, which clears it).
        /// </summary>
        [RuntimeInitializeOnLoadMethod(RuntimeInitializeLoadType.SubsystemRegistration)]
        public static void Install()
        {
            if (!installed)
            {
                installed = true;
                Sdk.UnhandledException += LogException;
                Application.quitting += Shutdown;
            }
            try
            {
                Sdk.SetLogCallback(LogMessage, LoggingSeverity.Info);
            }
            catch (Exception e)
            {
                Debug.LogException(e); // a mismatched library (SdkppAbiException): say so at start
            }
        }

        static void LogMessage(string message, LoggingSeverity severity)
        {
            switch (severity)
            {
                case LoggingSeverity.Error:
                    Debug.LogError("sdkpp: " + message);
                    break;
                case LoggingSeverity.Warning:
                    Debug.LogWarning("sdkpp: " + message);
                    break;
                default:
                    Debug.Log("sdkpp: " + message);
                    break;
            }
        }

        /// <summary>Sdk.Shutdown, logging instead of throwing: it runs from the engine's events.</summary>
        public static void Shutdown()
        {
            try
            {
                Sdk.Shutdown();
            }
            catch (Exception e)
            {
                Debug.LogException(e);
            }
        }

        static void LogException(object sender, SdkExceptionEventArgs e)
        {
            Debug.LogError("sdkpp: a game callback threw (" + e.Where + ")");
            Debug.LogException(e.Exception);
        }
    }

#if UNITY_EDITOR
    /// <summary>
    /// The editor's side: before every assembly reload (a script change, entering play mode with
    /// domain reload on) the SDK is shut down, so that the native library, which the editor never
    /// unloads, holds no callback or object of the domain that goes away.
    /// </summary>
    [UnityEditor.InitializeOnLoad]
    public static class SdkppEditorHooks
    {
        static SdkppEditorHooks()
        {
            UnityEditor.AssemblyReloadEvents.beforeAssemblyReload += SdkppUnity.Shutdown;
            SdkppUnity.Install();
        }
    }
#endif
}
#endif
